// An outbound account's webhook endpoints, on the webhook page: each with its URL and the
// event kinds it takes; add one (URL, kinds, token), its signing secret shown once, right
// after; delete one (its events not yet posted are dropped).
import { useState } from "preact/hooks";
import { LIFECYCLE_KINDS } from "../../../events/kinds.ts";
import { accountPath, call, errorText, type Session } from "../api.ts";
import { ErrorNote, TableHead, Time } from "../parts.tsx";
import { useList } from "../use-list.ts";

interface Endpoint {
  id: string;
  outbound_account_id: string;
  url: string;
  events: string[];
  has_token: boolean;
  created_at: string;
}

export function WebhookEndpoints({ session, outboundId }: { session: Session; outboundId: string }) {
  const list = useList<Endpoint>(accountPath(session.account_id, `webhooks?outbound_account_id=${encodeURIComponent(outboundId)}`));
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const [kinds, setKinds] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [made, setMade] = useState<{ url: string; secret: string } | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const toggle = (kind: string, on: boolean) => {
    const next = new Set(kinds);
    if (on) next.add(kind);
    else next.delete(kind);
    setKinds(next);
  };
  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setNote(null);
    try {
      const body = {
        outbound_account_id: outboundId,
        url: url.trim(),
        events: [...kinds],
        ...(token.trim() ? { token: token.trim() } : {}),
      };
      const created = await call<Endpoint & { signing_secret: string }>("POST", accountPath(session.account_id, "webhooks"), body);
      setMade({ url: created.url, secret: created.signing_secret });
      setUrl("");
      setToken("");
      setKinds(new Set());
      list.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async (endpoint: Endpoint) => {
    setError(null);
    setMade(null);
    try {
      await call("DELETE", accountPath(session.account_id, `webhooks/${endpoint.id}`));
      setNote(`${endpoint.url} no longer gets events.`);
      list.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="h-endpoints">
      <h2 id="h-endpoints">Endpoints</h2>
      <p class="hint">
        More receivers of this outbound account's events, besides the webhook above: each gets the kinds it names, with its own signing
        secret and its own retries.
      </p>
      <ErrorNote error={error ?? list.error} />
      {note && <p role="status">{note}</p>}
      {made && (
        <div class="card" role="status">
          <p>
            Endpoint added for <code class="wrap">{made.url}</code>. Its signing secret is shown only now: keep it where your receiver
            verifies signatures.
          </p>
          <p>
            <label for="endpoint-secret">Signing secret</label>
            <input id="endpoint-secret" readOnly value={made.secret} onFocus={(e) => e.currentTarget.select()} />
          </p>
        </div>
      )}
      <table>
        <caption class="visually-hidden">Webhook endpoints, oldest first</caption>
        <TableHead columns={["URL", "Events", "Token", "Since", { hidden: "Actions" }]} />
        <tbody>
          {list.items.map((e) => (
            <tr key={e.id}>
              <td>
                <code class="wrap">{e.url}</code>
              </td>
              <td>{e.events.length === 0 ? "every kind" : e.events.join(", ")}</td>
              <td>{e.has_token ? "yes" : "no"}</td>
              <td>
                <Time iso={e.created_at} />
              </td>
              <td>
                <button type="button" class="danger small" aria-label={`Delete the endpoint ${e.url}`} onClick={() => remove(e)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!list.loading && list.items.length === 0 && !list.error && <p>No endpoints yet.</p>}
      <form class="card" onSubmit={add} aria-labelledby="h-add-endpoint">
        <h3 id="h-add-endpoint">Add an endpoint</h3>
        <div class="fields">
          <div>
            <label for="endpoint-url">URL</label>
            <input
              id="endpoint-url"
              type="url"
              required
              placeholder="https://app.example.com/mail-events"
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
          </div>
          <div>
            <label for="endpoint-token">Token (optional)</label>
            <input id="endpoint-token" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
            <p class="hint">Sent as Authorization: Bearer with every POST.</p>
          </div>
        </div>
        <fieldset>
          <legend>Events (none ticked: every kind)</legend>
          {LIFECYCLE_KINDS.map((kind) => (
            <label key={kind} class="inline">
              <input type="checkbox" class="check" checked={kinds.has(kind)} onChange={(e) => toggle(kind, e.currentTarget.checked)} />{" "}
              {kind}{" "}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add endpoint</button>
      </form>
    </section>
  );
}
