// Incoming statuses (E6) of one address, newest first, with the API's search syntax; each
// row shows the target's answer (status and the stored response for non-2xx), and its
// Details; a kept message's headers and payload, and Post again.
import { accountPath, type Session } from "../api.ts";
import { ErrorNote, More, SearchBox, TableHead, Time } from "../parts.tsx";
import { navigate } from "../router.ts";
import { useList } from "../use-list.ts";
import type { Address } from "./addresses.tsx";
import { KeptMessage } from "./kept-message.tsx";
import { NotFound } from "./not-found.tsx";

interface IncomingStatus {
  id: string;
  message_id: string | null;
  from: string;
  to: string;
  subject: string | null;
  status: string;
  status_category: "successful" | "rejected" | "delayed";
  response: string | null;
  size: number | null;
  tls: string | null;
  remote_ip: string | null;
  x_postroom_message_id: string | null;
  store_url: string | null;
  created_at: string;
}

export function Incoming({ session, addressId, query }: { session: Session; addressId: string | null; query: string }) {
  const addresses = useList<Address>(accountPath(session.account_id, "addresses"));
  const chosen = addressId ?? addresses.items[0]?.id ?? null;
  const params = new URLSearchParams();
  if (chosen) params.set("address_id", chosen);
  if (query) params.set("query", query);
  const statuses = useList<IncomingStatus>(chosen ? accountPath(session.account_id, `incoming_statuses?${params}`) : null);
  const go = (address: string | null, q: string) =>
    navigate(`/incoming?${new URLSearchParams({ ...(address ? { address } : {}), ...(q ? { query: q } : {}) })}`);
  if (statuses.errorStatus === 404) return <NotFound what="address" />;
  return (
    <section aria-labelledby="h-incoming">
      <h1 id="h-incoming">Incoming mail</h1>
      <div class="toolbar">
        <div>
          <label for="address">Address</label>
          <select id="address" value={chosen ?? ""} onChange={(e) => go(e.currentTarget.value, query)}>
            {addresses.items.map((a) => (
              <option key={a.id} value={a.id}>
                {a.nickname ? `${a.nickname} (${a.email})` : a.email}
              </option>
            ))}
          </select>
        </div>
        <SearchBox key={query} value={query} label="Search" onSearch={(q) => go(chosen, q)} />
      </div>
      <ErrorNote error={statuses.error ?? addresses.error} />
      {!chosen && !addresses.loading && <p>No addresses yet.</p>}
      <table>
        <caption class="visually-hidden">Messages received, newest first</caption>
        <TableHead columns={["Received", "From", "To", "Subject", "Target status"]} />
        <tbody>
          {statuses.items.map((s) => (
            <tr key={s.id}>
              <td>
                <Time iso={s.created_at} />
              </td>
              <td>{s.from || "<>"}</td>
              <td>{s.to}</td>
              <td>
                {s.subject ?? ""}
                <details>
                  <summary>Details</summary>
                  <dl class="details">
                    <dt>Message-ID</dt>
                    <dd>{s.message_id ?? "—"}</dd>
                    <dt>Client</dt>
                    <dd>
                      {s.remote_ip ?? "—"}
                      {s.tls ? ` over ${s.tls}` : " without TLS"}
                    </dd>
                    <dt>Size</dt>
                    <dd>{s.size === null ? "—" : `${s.size} bytes`}</dd>
                    <dt>X-Postroom-Message-Id</dt>
                    <dd>{s.x_postroom_message_id ? <code>{s.x_postroom_message_id}</code> : "none: Postroom refused it itself"}</dd>
                    <dt>Message</dt>
                    <dd>
                      {s.store_url && chosen ? (
                        <KeptMessage
                          session={session}
                          addressId={chosen}
                          statusId={s.id}
                          storeUrl={s.store_url}
                          onPosted={statuses.reload}
                        />
                      ) : (
                        "not kept (the address's store_messages is off)"
                      )}
                    </dd>
                    <dt>Status ID</dt>
                    <dd>
                      <code>{s.id}</code>
                    </dd>
                  </dl>
                </details>
              </td>
              <td>
                <span class={`status ${s.status_category}`}>{s.status}</span>
                {s.response && (
                  <details>
                    <summary>Response</summary>
                    <pre>{s.response}</pre>
                  </details>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {chosen && !statuses.loading && statuses.items.length === 0 && !statuses.error && (
        <p>
          {statuses.next
            ? "No match among the newest messages searched so far: Load more searches older ones."
            : `No messages${query ? " match this search" : " yet"}.`}
        </p>
      )}
      <More list={statuses} />
    </section>
  );
}
