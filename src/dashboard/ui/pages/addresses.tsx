// Addresses (E1-E5): the list, a form to create one, delete, copy the email address, and
// a link to the mail each received.
import { useState } from "preact/hooks";
import { accountPath, ApiFailure, call, type Session } from "../api.ts";
import { CopyButton, ErrorNote, FormatSelect, More, NicknameField, TableHead, Time } from "../parts.tsx";
import { link } from "../router.ts";
import { useList } from "../use-list.ts";

export interface Address {
  id: string;
  email: string;
  target: string;
  target_format: string;
  nickname: string | null;
  store_messages?: boolean;
  on_target_failure?: "defer" | "queue";
  spam_threshold?: number | null;
  created_at: string;
}

export function Addresses({ session }: { session: Session }) {
  const addresses = useList<Address>(accountPath(session.account_id, "addresses"));
  const [error, setError] = useState<string | null>(null);
  const remove = async (a: Address) => {
    if (!confirm(`Delete ${a.email}? Mail to it is refused from then on.`)) return;
    try {
      await call("DELETE", accountPath(session.account_id, `addresses/${a.id}`));
      addresses.reload();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <section aria-labelledby="h-addresses">
      <h1 id="h-addresses">Addresses</h1>
      <NewAddress session={session} onCreated={addresses.reload} />
      <ErrorNote error={error ?? addresses.error} />
      <table>
        <caption class="visually-hidden">Addresses, newest first</caption>
        <TableHead columns={["Email address", "Nickname", "Target", "Created", { hidden: "Actions" }]} />
        <tbody>
          {addresses.items.map((a) => (
            <tr key={a.id}>
              <td>
                <a {...link(`/addresses/${a.id}`)}>
                  <code>{a.email}</code>
                </a>{" "}
                <CopyButton text={a.email} label={`Copy ${a.email}`} />
              </td>
              <td>{a.nickname ?? ""}</td>
              <td>
                <code class="wrap">{a.target}</code> <span class="tag">{a.target_format}</span>
              </td>
              <td>
                <Time iso={a.created_at} />
              </td>
              <td class="actions">
                <a {...link(`/incoming?address=${a.id}`)}>Received mail</a>
                <button type="button" class="small danger" onClick={() => remove(a)} aria-label={`Delete ${a.email}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!addresses.loading && addresses.items.length === 0 && <p>No addresses yet: create one above.</p>}
      <More list={addresses} />
    </section>
  );
}

function NewAddress({ session, onCreated }: { session: Session; onCreated: () => void }) {
  const [target, setTarget] = useState("");
  const [format, setFormat] = useState("json+n");
  const [nickname, setNickname] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<Address | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const body: Record<string, string> = { target, target_format: format };
      if (nickname.trim()) body.nickname = nickname.trim();
      setCreated(await call<Address>("POST", accountPath(session.account_id, "addresses"), body));
      setTarget("");
      setNickname("");
      onCreated();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="h-new-address">
      <h2 id="h-new-address">New address</h2>
      <div class="fields">
        <div>
          <label for="target">Target URL</label>
          <input
            id="target"
            type="url"
            required
            value={target}
            onInput={(e) => setTarget(e.currentTarget.value)}
            placeholder="https://example.com/incoming"
          />
        </div>
        <FormatSelect value={format} onChange={setFormat} />
        <NicknameField value={nickname} onChange={setNickname} />
      </div>
      <ErrorNote error={error} />
      {created && (
        <p role="status">
          Created <code>{created.email}</code>.
        </p>
      )}
      <button type="submit">Create address</button>
    </form>
  );
}
