// Sent messages (E12) of an outbound account with search, and one message (E13) with
// each recipient's events in order: dispatch, delivery with the remote server's reply,
// bounces with their text, opens, clicks.
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { accountPath, ApiFailure, get, type Session } from "../api.ts";
import { ErrorNote, More, SearchBox, Time, OutboundSelect } from "../parts.tsx";
import { link, navigate } from "../router.ts";
import { useList } from "../use-list.ts";
import { NotFound } from "./not-found.tsx";

interface Event {
  id: string;
  kind: string;
  created_at: string;
  details: Record<string, unknown>;
}

interface Recipient {
  email: string;
  type: string;
  status: string;
  last_event?: Event | null;
  events?: Event[];
}

interface SentMessage {
  id: string;
  outbound_account_id: string;
  from: string;
  subject: string | null;
  message_id: string;
  tags: string[];
  created_at: string;
  recipients: Recipient[];
}

export function Sent({ session, outboundId, query }: { session: Session; outboundId: string | null; query: string }) {
  const chosen = outboundId ?? session.outbound_account_ids[0] ?? null;
  const params = new URLSearchParams();
  if (chosen) params.set("outbound_account_id", chosen);
  if (query) params.set("query", query);
  const messages = useList<SentMessage>(chosen ? accountPath(session.account_id, `outbound_messages?${params}`) : null);
  const go = (outbound: string | null, q: string) => navigate(`/sent?${new URLSearchParams({ ...(outbound ? { outbound } : {}), ...(q ? { query: q } : {}) })}`);
  return (
    <section aria-labelledby="h-sent">
      <h1 id="h-sent">Sent mail</h1>
      {!chosen && <p>This account has no outbound accounts ([[accounts.outbound]] in the config).</p>}
      <div class="toolbar">
        <OutboundSelect ids={session.outbound_account_ids} value={chosen} onChange={(id) => go(id, query)} />
        <SearchBox key={query} value={query} label="Search" onSearch={(q) => go(chosen, q)} />
      </div>
      <ErrorNote error={messages.error} />
      <table>
        <caption class="visually-hidden">Messages sent, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Sent</th>
            <th scope="col">From</th>
            <th scope="col">Subject</th>
            <th scope="col">Recipients</th>
          </tr>
        </thead>
        <tbody>
          {messages.items.map((m) => (
            <tr key={m.id}>
              <td>
                <a {...link(`/sent/${m.id}`)}>
                  <Time iso={m.created_at} />
                </a>
              </td>
              <td>{m.from}</td>
              <td>{m.subject ?? ""}</td>
              <td>
                <ul class="plain">
                  {m.recipients.map((r) => (
                    <li key={r.email + r.type}>
                      {r.email} <span class={`status ${r.status}`}>{r.status}</span>
                    </li>
                  ))}
                </ul>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {chosen && !messages.loading && messages.items.length === 0 && !messages.error && (
        <p>{messages.next ? "No match among the newest messages searched so far: Load more searches older ones." : `No messages${query ? " match this search" : " yet"}.`}</p>
      )}
      <More list={messages} />
    </section>
  );
}

export function SentMessage({ session, id }: { session: Session; id: string }) {
  const [message, setMessage] = useState<SentMessage | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<SentMessage>(accountPath(session.account_id, `outbound_messages/${id}`)).then(setMessage, (err) => {
      if (err instanceof ApiFailure && err.status === 404) setMessage(null);
      else setError(err instanceof ApiFailure ? err.message : String(err));
    });
  }, [session.account_id, id]);
  if (message === null) return <NotFound what="message" />;
  if (message === undefined) return <ErrorNote error={error} />;
  return (
    <section aria-labelledby="h-message">
      <p>
        <a {...link("/sent")}>← Sent mail</a>
      </p>
      <h1 id="h-message">{message.subject || "(no subject)"}</h1>
      <dl class="facts">
        <dt>From</dt>
        <dd>{message.from}</dd>
        <dt>Message-ID</dt>
        <dd>
          <code>{message.message_id}</code>
        </dd>
        <dt>Sent</dt>
        <dd>
          <Time iso={message.created_at} />
        </dd>
        {message.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>{message.tags.join(", ")}</dd>
          </>
        )}
      </dl>
      {message.recipients.map((r) => (
        <section key={r.email + r.type} class="card" aria-label={`Events for ${r.email}`}>
          <h2>
            {r.email} <span class={`status ${r.status}`}>{r.status}</span>
          </h2>
          <ol class="timeline">
            {(r.events ?? []).map((e) => (
              <li key={e.id}>
                <Time iso={e.created_at} /> <strong>{e.kind}</strong>
                <EventDetails details={e.details} />
              </li>
            ))}
          </ol>
        </section>
      ))}
    </section>
  );
}

/** An event's details as the remote server or the bounce gave them (reply, DSN text...). */
function EventDetails({ details }: { details: Record<string, unknown> }) {
  const entries = Object.entries(details).filter(([, v]) => v !== null && v !== "" && v !== undefined);
  if (entries.length === 0) return null;
  return (
    <dl class="details">
      {entries.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
