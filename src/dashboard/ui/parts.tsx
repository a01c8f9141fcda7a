// Small pieces the pages share.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import type { ListState } from "./use-list.ts";

export function ErrorNote({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={d.toISOString()}>
      {d.toLocaleString()}
    </time>
  );
}

/** The end of a list: "Load more" while the API has a next page. */
export function More<T>({ list }: { list: ListState<T> }) {
  if (list.loading) return <p aria-live="polite">Loading…</p>;
  if (!list.next) return null;
  return (
    <button type="button" class="secondary" onClick={list.more}>
      Load more
    </button>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text).catch(() => {});
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" class="small secondary" onClick={copy} aria-label={label}>
      {done ? "Copied" : "Copy"}
    </button>
  );
}

/**
 * A search box that submits its text on Enter or the button; `placeholder` names fields the
 * page's search takes (each list's search has its own).
 */
export function SearchBox({
  value,
  onSearch,
  label,
  placeholder,
}: {
  value: string;
  onSearch: (q: string) => void;
  label: string;
  placeholder: string;
}) {
  const [text, setText] = useState(value);
  return (
    <form
      role="search"
      class="search"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(text.trim());
      }}
    >
      <label for="q">{label}</label>
      <input id="q" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder={placeholder} />
      <button type="submit">Search</button>
    </form>
  );
}

/** The target formats an address can have (docs/receiving.md), as the forms offer them. */
const TARGET_FORMATS: [string, string][] = [
  ["json+n", "json+n"],
  ["multipart+n", "multipart+n"],
  ["json", "json (header names as written)"],
  ["multipart", "multipart (header names as written)"],
  ["raw", "raw (the message and the envelope)"],
  ["rfc822", "rfc822 (the message itself)"],
];

/** The "Format" field of the address forms. */
export function FormatSelect({ value, onChange }: { value: string; onChange: (format: string) => void }) {
  return (
    <div>
      <label for="format">Format</label>
      <select id="format" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {TARGET_FORMATS.some(([v]) => v === value) ? null : <option value={value}>{value}</option>}
        {TARGET_FORMATS.map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The choice of outbound account on the pages that show one at a time. */
export function OutboundSelect({ ids, value, onChange }: { ids: readonly string[]; value: string | null; onChange: (id: string) => void }) {
  return (
    <div>
      <label for="outbound">Outbound account</label>
      <select id="outbound" value={value ?? ""} onChange={(e) => onChange(e.currentTarget.value)}>
        {ids.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A column a screen reader names but the eye does not need (a row's actions, its checkbox). */
export interface HiddenColumn {
  hidden: string;
}

/** A table's header row: one column header (scope="col") per name. */
export function TableHead({ columns }: { columns: readonly (string | HiddenColumn)[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) =>
          typeof c === "string" ? (
            <th scope="col" key={c}>
              {c}
            </th>
          ) : (
            <th scope="col" key={c.hidden}>
              <span class="visually-hidden">{c.hidden}</span>
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}

/** An address's nickname, optional (the create form and the address's page). */
export function NicknameField({ value, onChange }: { value: string; onChange: (nickname: string) => void }) {
  return (
    <div>
      <label for="nickname">Nickname (optional)</label>
      <input id="nickname" value={value} onInput={(e) => onChange(e.currentTarget.value)} />
    </div>
  );
}

/**
 * A host name that wraps only after its dots, never inside a label: each label (with its
 * dot) stays whole, and a line may end between labels.
 */
export function Host({ name }: { name: string }) {
  const labels = name.split(".");
  return (
    <code class="host">
      {labels.map((label, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          <span>{i < labels.length - 1 ? `${label}.` : label}</span>
        </Fragment>
      ))}
    </code>
  );
}
