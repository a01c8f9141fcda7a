// Suppressions: recipients an outbound account no longer sends to (bounces, complaints,
// added by hand). List with search, add, remove one or several at once.
import { useState } from "preact/hooks";
import { accountPath, ApiFailure, call, type Session } from "../api.ts";
import { ErrorNote, More, OutboundSelect, SearchBox, TableHead, Time } from "../parts.tsx";
import { navigate } from "../router.ts";
import { useList } from "../use-list.ts";

interface Suppression {
  id: string;
  outbound_account_id: string;
  email: string;
  reason: string;
  created_at: string;
  expires_at: string | null;
}

export function Suppressions({ session, outboundId, query }: { session: Session; outboundId: string | null; query: string }) {
  const chosen = outboundId ?? session.outbound_account_ids[0] ?? null;
  const params = new URLSearchParams();
  if (chosen) params.set("outbound_account_id", chosen);
  if (query) params.set("query", query);
  const list = useList<Suppression>(chosen ? accountPath(session.account_id, `suppressions?${params}`) : null);
  const [email, setEmail] = useState("");
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const go = (outbound: string | null, q: string) =>
    navigate(`/suppressions?${new URLSearchParams({ ...(outbound ? { outbound } : {}), ...(q ? { query: q } : {}) })}`);
  const fail = (err: unknown) => setError(err instanceof ApiFailure ? err.message : String(err));
  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await call("POST", accountPath(session.account_id, "suppressions"), { outbound_account_id: chosen, email: email.trim() });
      setNote(`${email.trim()} is suppressed.`);
      setEmail("");
      list.reload();
    } catch (err) {
      fail(err);
    }
  };
  const removeSelected = async () => {
    setError(null);
    const ids = [...selected];
    try {
      for (const id of ids) await call("DELETE", accountPath(session.account_id, `suppressions/${id}`));
      setNote(`${ids.length} removed: mail to ${ids.length === 1 ? "that address goes" : "those addresses goes"} out again.`);
    } catch (err) {
      fail(err);
    }
    setSelected(new Set());
    list.reload();
  };
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  return (
    <section aria-labelledby="h-suppressions">
      <h1 id="h-suppressions">Suppressions</h1>
      <div class="toolbar">
        <OutboundSelect ids={session.outbound_account_ids} value={chosen} onChange={(id) => go(id, "")} />
        <SearchBox
          key={`${chosen}\n${query}`}
          value={query}
          label="Search"
          placeholder="part of an address, e.g. example.org"
          onSearch={(q) => go(chosen, q)}
        />
      </div>
      <form class="card" onSubmit={add} aria-labelledby="h-add-suppression">
        <h2 id="h-add-suppression">Stop sending to an address</h2>
        <div class="fields">
          <div>
            <label for="email">Email address</label>
            <input id="email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </div>
        </div>
        <button type="submit" disabled={!chosen}>
          Add suppression
        </button>
      </form>
      <ErrorNote error={error ?? list.error} />
      {note && <p role="status">{note}</p>}
      <div class="buttons">
        <button type="button" class="danger" disabled={selected.size === 0} onClick={removeSelected}>
          Remove selected ({selected.size})
        </button>
      </div>
      <table>
        <caption class="visually-hidden">Suppressed addresses, newest first</caption>
        <TableHead columns={[{ hidden: "Select" }, "Email address", "Reason", "Since", "Until"]} />
        <tbody>
          {list.items.map((s) => (
            <tr key={s.id}>
              <td>
                <input
                  type="checkbox"
                  class="check"
                  aria-label={`Select ${s.email}`}
                  checked={selected.has(s.id)}
                  onChange={(e) => toggle(s.id, e.currentTarget.checked)}
                />
              </td>
              <td>{s.email}</td>
              <td>{s.reason}</td>
              <td>
                <Time iso={s.created_at} />
              </td>
              <td>{s.expires_at ? <Time iso={s.expires_at} /> : "for good"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {chosen && !list.loading && list.items.length === 0 && !list.error && (
        <p>No suppressed addresses{query ? " match this search" : ""}.</p>
      )}
      <More list={list} />
    </section>
  );
}
