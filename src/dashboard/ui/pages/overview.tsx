// The overview: inbound messages by outcome and outbound events by kind over the last 24
// hours or 7 days (GET /stats), the queue, the webhook backlog and what needs a look.
import { useEffect, useState } from "preact/hooks";
import { accountPath, ApiFailure, get, type Session } from "../api.ts";
import { StackedBars } from "../chart.tsx";
import { ErrorNote, Time } from "../parts.tsx";
import { link } from "../router.ts";
import { type ComplaintRate, ComplaintRates } from "./complaint-rates.tsx";
import { GettingStarted } from "./getting-started.tsx";
import { SendingIpsWarning } from "./sending-ips.tsx";

interface Stats {
  period: "24h" | "7d";
  buckets: { at: string; inbound: Record<string, number>; outbound: Record<string, number> }[];
  totals: { inbound: Record<string, number>; outbound: Record<string, number> };
  queue: { recipients: number };
  webhook_backlog: { events: number; oldest_at: string | null };
  complaint_rates: ComplaintRate[];
  warnings: string[];
}

const INBOUND = ["successful", "rejected", "delayed"] as const;
const OUTBOUND = ["delivery", "bounce", "deferral", "open", "click"] as const;

export function Overview({ session }: { session: Session }) {
  const [period, setPeriod] = useState<"24h" | "7d">("24h");
  const [stats, setStats] = useState<Stats | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<Stats>(accountPath(session.account_id, `stats?period=${period}`)).then(setStats, (err) =>
      setError(err instanceof ApiFailure ? err.message : String(err)),
    );
  }, [session.account_id, period]);
  // Drawn for the period the figures are of (the button may already name the next one).
  const shown = stats?.period ?? period;
  const label = (at: string) =>
    new Date(at).toLocaleString([], shown === "24h" ? { hour: "2-digit", minute: "2-digit" } : { weekday: "short", hour: "2-digit" });
  // 24 hourly bars: a time every 6 hours. 28 bars of 6 hours: the day under the first bar of each day (in the browser's time zone).
  const tick = (at: string, previous: string | null, i: number): string | null => {
    if (shown === "24h") return i % 6 === 0 ? new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : null;
    if (previous === null || new Date(at).getDate() === new Date(previous).getDate()) return null;
    return new Date(at).toLocaleDateString([], { weekday: "short", day: "numeric" });
  };
  return (
    <section aria-labelledby="h-overview">
      <h1 id="h-overview">Overview</h1>
      <div class="buttons" role="group" aria-label="Period">
        {(["24h", "7d"] as const).map((p) => (
          <button key={p} type="button" class={p === period ? "" : "secondary"} aria-pressed={p === period} onClick={() => setPeriod(p)}>
            {p === "24h" ? "Last 24 hours" : "Last 7 days"}
          </button>
        ))}
      </div>
      <ErrorNote error={error} />
      {session.sending_ips_empty && <SendingIpsWarning />}
      <GettingStarted session={session} />
      {stats && (
        <>
          {stats.warnings.length > 0 && (
            <div class="card warnings" role="region" aria-label="Warnings">
              <h2>Needs a look</h2>
              <ul>
                {stats.warnings.map((w) => {
                  const path = warningPath(w);
                  return <li key={w}>{path ? <a {...link(path)}>{w}</a> : w}</li>;
                })}
              </ul>
            </div>
          )}
          <div class="tiles">
            <Tile path="/incoming" n={Object.values(stats.totals.inbound).reduce((a, b) => a + b, 0)} what="received" />
            <Tile path="/sent?query=status%3Adelivery" n={stats.totals.outbound.delivery ?? 0} what="delivered" />
            <Tile path="/sent?query=status%3Abounce" n={stats.totals.outbound.bounce ?? 0} what="bounced" />
            <Tile path="/sent" n={stats.queue.recipients} what="in the queue" />
            <Tile path="/webhook" n={stats.webhook_backlog.events} what="webhook events waiting">
              {stats.webhook_backlog.oldest_at && (
                <>
                  {" "}
                  since <Time iso={stats.webhook_backlog.oldest_at} />
                </>
              )}
            </Tile>
          </div>
          <StackedBars
            title="Received mail by outcome"
            keys={INBOUND}
            buckets={stats.buckets.map((b) => ({ at: b.at, counts: b.inbound }))}
            label={label}
            tick={tick}
          />
          <StackedBars
            title="Sent mail: recipients by event"
            keys={OUTBOUND}
            buckets={stats.buckets.map((b) => ({ at: b.at, counts: b.outbound }))}
            label={label}
            tick={tick}
          />
          <ComplaintRates rates={stats.complaint_rates} />
        </>
      )}
    </section>
  );
}

/** A figure of the overview, a link to the page that lists what it counts. */
function Tile({ path, n, what, children }: { path: string; n: number; what: string; children?: preact.ComponentChildren }) {
  return (
    <a class="tile" {...link(path)}>
      <span class="n">{n}</span> {what}
      {children}
    </a>
  );
}

/** The page that lists what a warning of GET /stats is about (its words are fixed by src/api/stats.ts), if any. */
function warningPath(warning: string): string | null {
  if (/received messages? (was|were) not accepted/.test(warning)) return "/incoming";
  if (/sending domains?('s|s')? /.test(warning)) return "/domains";
  if (/^webhook events /.test(warning)) return "/webhook";
  return null;
}
