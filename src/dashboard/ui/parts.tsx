// Small pieces the pages share.
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

/** A search box that submits its text (the API's search syntax) on Enter or the button. */
export function SearchBox({ value, onSearch, label }: { value: string; onSearch: (q: string) => void; label: string }) {
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
      <input id="q" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder='e.g. status:404 from:alice "invoice 12"' />
      <button type="submit">Search</button>
    </form>
  );
}
