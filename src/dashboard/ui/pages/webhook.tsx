// The webhook of an outbound account: its URL, the events waiting and when they are tried
// again, the latest POSTs with the receiver's status and answer; "Send a test event" and
// "Retry now"; then its endpoints (webhook-endpoints.tsx).
import { useEffect, useState } from "preact/hooks";
import { accountPath, call, errorText, get, type Session } from "../api.ts";
import { ErrorNote, OutboundSelect, TableHead, Time } from "../parts.tsx";
import { navigate } from "../router.ts";
import { WebhookEndpoints } from "./webhook-endpoints.tsx";

interface Post {
  id: string;
  webhook_id: string;
  events: number;
  test: boolean;
  status: number | null;
  problem: string;
  duration_ms: number;
  created_at: string;
}

interface WebhookStatus {
  webhook: { url: string; signed: boolean } | null;
  pending: { events: number; oldest_at: string | null; next_attempt_at: string | null };
  posts: Post[];
}

/** How often the page reads the webhook's state again while events wait. */
const REFRESH_MS = 10_000;

export function Webhook({ session, outboundId }: { session: Session; outboundId: string | null }) {
  const chosen = outboundId ?? session.outbound_account_ids[0] ?? null;
  const q = `outbound_account_id=${chosen}`;
  const [status, setStatus] = useState<WebhookStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () => {
    if (chosen) get<WebhookStatus>(accountPath(session.account_id, `webhook?${q}`)).then(setStatus, (err) => setError(errorText(err)));
  };
  useEffect(load, [session.account_id, chosen]);
  // While events wait, the page follows them (a POST due now is soon made or retried).
  const waiting = (status?.pending.events ?? 0) > 0;
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [waiting, session.account_id, chosen]);
  const test = async () => {
    setError(null);
    try {
      const post = await call<Post>("POST", accountPath(session.account_id, `webhook/test?${q}`));
      setNote(
        post.status !== null && post.status < 300
          ? `The receiver answered ${post.status}.`
          : `The receiver answered ${post.status ?? "nothing"}: ${post.problem}`,
      );
      load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const retry = async () => {
    setError(null);
    try {
      const r = await call<{ pending: number }>("POST", accountPath(session.account_id, `webhook/retry?${q}`));
      setNote(`${r.pending} event${r.pending === 1 ? "" : "s"} will be posted now.`);
      setTimeout(load, 1000);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="h-webhook">
      <h1 id="h-webhook">Webhook</h1>
      <div class="toolbar">
        <OutboundSelect ids={session.outbound_account_ids} value={chosen} onChange={(id) => navigate(`/webhook?outbound=${id}`)} />
      </div>
      <ErrorNote error={error} />
      {note && <p role="status">{note}</p>}
      {status && (
        <>
          <dl class="facts">
            <dt>URL</dt>
            <dd>
              {status.webhook ? (
                <code class="wrap">{status.webhook.url}</code>
              ) : (
                "none: set webhook = { url, token } for the account or outbound account in the config"
              )}
            </dd>
            <dt>Signed</dt>
            <dd>{status.webhook ? (status.webhook.signed ? "yes (Standard Webhooks)" : "no") : "—"}</dd>
            <dt>Waiting</dt>
            <dd>
              {status.pending.events} event{status.pending.events === 1 ? "" : "s"}
              {status.pending.oldest_at && (
                <>
                  , the oldest since <Time iso={status.pending.oldest_at} />
                </>
              )}
            </dd>
            <dt>Next POST</dt>
            <dd>
              <NextPost status={status} />
            </dd>
          </dl>
          <div class="buttons">
            <button type="button" onClick={test} disabled={!status.webhook}>
              Send a test event
            </button>
            <button type="button" class="secondary" onClick={retry} disabled={!status.webhook || status.pending.events === 0}>
              Retry now
            </button>
          </div>
          <h2>Latest POSTs</h2>
          <table>
            <TableHead columns={["Time", "Events", "Answer", "Took"]} />
            <tbody>
              {status.posts.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Time iso={p.created_at} />
                    {p.test && <span class="tag">test</span>}
                  </td>
                  <td>
                    {p.events} <code class="small">{p.webhook_id}</code>
                  </td>
                  <td>
                    <span class={`status ${p.status !== null && p.status < 300 ? "successful" : "rejected"}`}>
                      {p.status ?? "no answer"}
                    </span>
                    {p.problem && <p class="hint">{p.problem}</p>}
                  </td>
                  <td>{p.duration_ms} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
          {status.posts.length === 0 && <p>No POSTs yet.</p>}
        </>
      )}
      {chosen && <WebhookEndpoints key={chosen} session={session} outboundId={chosen} />}
    </section>
  );
}

/**
 * When the waiting events are posted. The API gives the earliest next_attempt_at of the
 * waiting events: a time already past means they are due now (posted as soon as the POST in
 * flight ends, or retried after a failure), not that a POST happened then.
 */
function NextPost({ status }: { status: WebhookStatus }) {
  const at = status.pending.next_attempt_at;
  if (status.pending.events === 0 || !at) return <>none: no event is waiting</>;
  if (Date.parse(at) > Date.now())
    return (
      <>
        <Time iso={at} /> ({status.posts[0] && isFailure(status.posts[0]) ? "a retry after the last POST failed" : "scheduled"})
      </>
    );
  return (
    <>
      <strong>due now</strong>
      {status.posts[0] && isFailure(status.posts[0])
        ? ": retrying after the last POST failed"
        : ": posted now, or as soon as the POST in flight ends"}{" "}
      (waiting since <Time iso={at} />)
    </>
  );
}

const isFailure = (p: Post) => p.status === null || p.status >= 300;
