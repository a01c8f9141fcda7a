// Sent messages (E12) of an outbound account with search, and one message (E13) with
// each recipient's events in order: dispatch, delivery with the remote server's reply,
// bounces with their text, opens, clicks.
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { accountPath, ApiFailure, call, get, type Session } from "../api.ts";
import { ErrorNote, More, OutboundSelect, SearchBox, TableHead, Time } from "../parts.tsx";
import { link, navigate } from "../router.ts";
import { useList } from "../use-list.ts";
import { NotFound } from "./not-found.tsx";
import { ScheduledTag, SchedulingFacts } from "./scheduled.tsx";

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
  /** Validated and recorded, never sent: nothing is queued, nothing can be retried or cancelled. */
  test_mode: boolean;
  created_at: string;
  send_at?: string;
  metadata?: Record<string, string>;
  recipients: Recipient[];
}

export function Sent({ session, outboundId, query }: { session: Session; outboundId: string | null; query: string }) {
  const chosen = outboundId ?? session.outbound_account_ids[0] ?? null;
  const params = new URLSearchParams();
  if (chosen) params.set("outbound_account_id", chosen);
  if (query) params.set("query", query);
  const messages = useList<SentMessage>(chosen ? accountPath(session.account_id, `outbound_messages?${params}`) : null);
  const go = (outbound: string | null, q: string) =>
    navigate(`/sent?${new URLSearchParams({ ...(outbound ? { outbound } : {}), ...(q ? { query: q } : {}) })}`);
  return (
    <section aria-labelledby="h-sent">
      <h1 id="h-sent">Sent mail</h1>
      {!chosen && <p>This account has no outbound accounts ([[accounts.outbound]] in the config).</p>}
      <div class="toolbar">
        <OutboundSelect ids={session.outbound_account_ids} value={chosen} onChange={(id) => go(id, "")} />
        <SearchBox
          key={`${chosen}\n${query}`}
          value={query}
          label="Search"
          placeholder="e.g. to:bob@example.org tag:invoice status:bounce metadata.order_id:1001"
          onSearch={(q) => go(chosen, q)}
        />
        <button type="button" onClick={() => go(chosen, "status:scheduled")}>
          Scheduled
        </button>
      </div>
      <ErrorNote error={messages.error} />
      <table>
        <caption class="visually-hidden">Messages sent, newest first</caption>
        <TableHead columns={["Sent", "From", "Subject", "Recipients"]} />
        <tbody>
          {messages.items.map((m) => (
            <tr key={m.id}>
              <td>
                <a {...link(`/sent/${m.id}`)}>
                  <Time iso={m.created_at} />
                </a>
              </td>
              <td>{m.from}</td>
              <td>
                {m.subject ?? ""}
                {m.test_mode && (
                  <>
                    {" "}
                    <TestModeTag />
                  </>
                )}{" "}
                <ScheduledTag session={session} message={m} onChanged={messages.reload} />
              </td>
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
        <p>
          {messages.next
            ? "No match among the newest messages searched so far: Load more searches older ones."
            : `No messages${query ? " match this search" : " yet"}.`}
        </p>
      )}
      <More list={messages} />
    </section>
  );
}

export function SentMessage({ session, id }: { session: Session; id: string }) {
  const [message, setMessage] = useState<SentMessage | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const reload = () =>
    get<SentMessage>(accountPath(session.account_id, `outbound_messages/${id}`)).then(setMessage, (err) => {
      if (err instanceof ApiFailure && err.status === 404) setMessage(null);
      else setError(err instanceof ApiFailure ? err.message : String(err));
    });
  useEffect(() => void reload(), [session.account_id, id]);
  if (message === null) return <NotFound what="message" />;
  if (message === undefined) return <ErrorNote error={error} />;
  return (
    <section aria-labelledby="h-message">
      <p>
        <a {...link("/sent")}>← Sent mail</a>
      </p>
      <h1 id="h-message">{message.subject || "(no subject)"}</h1>
      {message.test_mode && (
        <p>
          <TestModeTag /> This message was sent in test mode: validated and recorded, never delivered, so there is nothing to retry or
          cancel.
        </p>
      )}
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
        <SchedulingFacts message={message} />
      </dl>
      <MessageActions session={session} message={message} onChanged={reload} />
      {message.recipients.map((r) => (
        <section key={r.email + r.type} class="card" aria-label={`Events for ${r.email}`}>
          <h2>
            {r.email} <span class={`status ${r.status}`}>{r.status}</span>
          </h2>
          <ol class="timeline">
            {(r.events ?? []).map((e) => (
              <li key={e.id}>
                <Time iso={e.created_at} /> <strong>{e.kind}</strong>
                {typeof e.details.bounce_class === "string" && (
                  <>
                    {" "}
                    <span class="tag" title="bounce class">
                      {e.details.bounce_class}
                    </span>
                  </>
                )}
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

/** Statuses of a recipient still in the queue (waiting for its first or next attempt). */
const QUEUED = new Set(["registration", "dispatch", "soft_bounce"]);

interface Content {
  headers: { name: string; value: string }[];
  text: string | null;
  html: string | null;
  attachments: { filename: string | null; content_type: string; size: number }[];
}

/** Retry now and cancel for queued recipients; the message's headers, text, HTML (sandboxed) and source. */
function MessageActions({ session, message, onChanged }: { session: Session; message: SentMessage; onChanged: () => void }) {
  const base = accountPath(session.account_id, `outbound_messages/${message.id}`);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [content, setContent] = useState<Content | null>(null);
  useEffect(() => {
    get<Content>(`${base}/content`).then(setContent, (err) => setError(err instanceof ApiFailure ? err.message : String(err)));
  }, [base]);
  const queued = !message.test_mode && message.recipients.some((r) => QUEUED.has(r.status));
  const act = async (what: "retry" | "cancel") => {
    setError(null);
    try {
      if (what === "retry") setNote(`${(await call<{ due: number }>("POST", `${base}/retry`)).due} recipient(s) will be tried now.`);
      else {
        if (!confirm("Cancel delivery to the recipients still in the queue? They get an error event and are not tried again.")) return;
        const r = await call<{ cancelled: number; in_delivery: number }>("POST", `${base}/cancel`);
        setNote(
          `${r.cancelled} recipient(s) cancelled${r.in_delivery ? `; ${r.in_delivery} being delivered right now could not be` : ""}.`,
        );
      }
      setTimeout(onChanged, 500);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <>
      <div class="buttons">
        {queued && (
          <>
            <button type="button" onClick={() => act("retry")}>
              Retry now
            </button>
            <button type="button" class="danger" onClick={() => act("cancel")}>
              Cancel queued recipients
            </button>
          </>
        )}
        <a class="button-link" href={`${base}/raw`} download={`${message.id}.eml`}>
          Download source (.eml)
        </a>
      </div>
      {note && <p role="status">{note}</p>}
      <ErrorNote error={error} />
      {content && (
        <>
          {content.html !== null && (
            <details open>
              <summary>HTML</summary>
              {/* No scripts, no forms, no same-origin access; remote images stay blocked by the page's CSP. */}
              <iframe class="html-part" sandbox="" srcdoc={content.html} title="The HTML part of the message" />
            </details>
          )}
          {content.text !== null && (
            <details>
              <summary>Plain text</summary>
              <pre>{content.text}</pre>
            </details>
          )}
          <details>
            <summary>Headers</summary>
            <dl class="details">
              {content.headers.map((h, i) => (
                <Fragment key={i}>
                  <dt>{h.name}</dt>
                  <dd>{h.value}</dd>
                </Fragment>
              ))}
            </dl>
          </details>
          {content.attachments.length > 0 && (
            <p>
              Attachments: {content.attachments.map((a) => `${a.filename ?? "(no name)"} (${a.content_type}, ${a.size} bytes)`).join(", ")}
            </p>
          )}
        </>
      )}
    </>
  );
}

function TestModeTag() {
  return <span class="tag test-mode">test mode</span>;
}
