// Incoming statuses (E6) of one address or of all at once, newest first, with the API's
// search syntax; each row shows the target's answer (status and the stored response for
// non-2xx), the SMTP reply the sender got, and its Details; a kept message's headers and
// payload, and Post again.
import { accountPath, type Session } from "../api.ts";
import { useMergedList } from "../merged-list.ts";
import { ErrorNote, More, SearchBox, TableHead, Time } from "../parts.tsx";
import { navigate } from "../router.ts";
import { senderReply } from "../sender-reply.ts";
import { useList } from "../use-list.ts";
import type { Address } from "./addresses.tsx";
import { KeptMessage } from "./kept-message.tsx";
import { NotFound } from "./not-found.tsx";

interface IncomingStatus {
  id: string;
  address_id: string;
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
  /** (beyond) delivered, rejected, deferred, queued, expired (docs/receiving.md). */
  state?: string;
  attempts?: number;
  next_attempt_at?: string | null;
}

/** Incoming mail: `addressId` one address, or every address of the account when null. */
export function Incoming({ session, addressId, query }: { session: Session; addressId: string | null; query: string }) {
  const addresses = useList<Address>(accountPath(session.account_id, "addresses"));
  const pathOf = (id: string) => {
    const params = new URLSearchParams({ address_id: id });
    if (query) params.set("query", query);
    return accountPath(session.account_id, `incoming_statuses?${params}`);
  };
  const one = useList<IncomingStatus>(addressId ? pathOf(addressId) : null);
  const all = useMergedList<IncomingStatus>(addressId || addresses.loading ? null : addresses.items.map((a) => pathOf(a.id)));
  const statuses = addressId ? one : all;
  // Another address is other mail: its search starts empty.
  const go = (address: string | null, q: string) =>
    navigate(`/incoming?${new URLSearchParams({ ...(address ? { address } : {}), ...(q ? { query: q } : {}) })}`);
  const hasAddresses = addresses.items.length > 0;
  if (statuses.errorStatus === 404) return <NotFound what="address" />;
  return (
    <section aria-labelledby="h-incoming">
      <h1 id="h-incoming">Incoming mail</h1>
      <div class="toolbar">
        <div>
          <label for="address">Address</label>
          <select id="address" value={addressId ?? ""} onChange={(e) => go(e.currentTarget.value || null, "")}>
            <option value="">All addresses</option>
            {addresses.items.map((a) => (
              <option key={a.id} value={a.id}>
                {a.nickname ? `${a.nickname} (${a.email})` : a.email}
              </option>
            ))}
          </select>
        </div>
        <SearchBox
          key={`${addressId}\n${query}`}
          value={query}
          label="Search"
          placeholder='e.g. status:404 from:alice subject:invoice "two words"'
          onSearch={(q) => go(addressId, q)}
        />
      </div>
      <ErrorNote error={statuses.error ?? addresses.error} />
      {!hasAddresses && !addresses.loading && <p>No addresses yet.</p>}
      <table>
        <caption class="visually-hidden">Messages received, newest first</caption>
        <TableHead columns={["Received", "From", "To", "Subject", "Target status and SMTP reply"]} />
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
                      {s.store_url ? (
                        <KeptMessage
                          session={session}
                          addressId={s.address_id}
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
                <SmtpReply status={s} />
                <Queued status={s} />
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
      {hasAddresses && !statuses.loading && statuses.items.length === 0 && !statuses.error && (
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

/** The SMTP reply the sender got (derived from the status: sender-reply.ts). */
/** (beyond) A message kept for its target (on_target_failure = "queue"): what became of it, after how many POSTs. */
function Queued({ status }: { status: IncomingStatus }) {
  if (!kept(status)) return null;
  return (
    <p class="reply">
      Kept for the target: {status.state}, {status.attempts} {status.attempts === 1 ? "POST" : "POSTs"}
      {status.next_attempt_at && (
        <>
          , next <Time iso={status.next_attempt_at} />
        </>
      )}
    </p>
  );
}

/** Queued or expired now, or posted more than once: the sender was told 250 when it was kept. */
const kept = (s: IncomingStatus) => s.state === "queued" || s.state === "expired" || (s.attempts ?? 1) > 1;

function SmtpReply({ status }: { status: IncomingStatus }) {
  if (kept(status))
    return (
      <p class="reply">
        Sender was told <code>250 2.0.0 Accepted; the target is unavailable, the message is kept and will be posted again</code>
      </p>
    );
  const reply = senderReply(status.status, status.response);
  return reply ? (
    <p class="reply">
      Sender was told <code>{reply}</code>
    </p>
  ) : null;
}
