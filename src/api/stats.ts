// (beyond) GET /api/v0.1/{accountId}/stats: what the dashboard's overview shows, from the
// hourly counts (src/stats/): inbound messages by outcome and outbound events by kind over
// the last 24 hours or 7 days, the account's queue and webhook backlog, and warnings.
import { t } from "elysia";
import { complaintWarnings } from "../deliverability/complaints.ts";
import { isoTime } from "../lib/clock.ts";
import { buckets, periodStartMs, PERIODS, SERIES, type PeriodName } from "../stats/hourly.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses } from "../http/errors.ts";

const counts = (keys: readonly string[]) =>
  t.Object(Object.fromEntries(keys.map((k) => [k, t.Integer({ minimum: 0 })])), { additionalProperties: false });

const StatsSchema = t.Object(
  {
    period: t.Union([t.Literal("24h"), t.Literal("7d")]),
    bucket_seconds: t.Integer({ description: "the span of each bucket" }),
    buckets: t.Array(
      t.Object(
        {
          at: t.String({ format: "date-time", description: "start of the bucket" }),
          inbound: counts(SERIES.inbound),
          outbound: counts(SERIES.outbound),
        },
        { additionalProperties: false },
      ),
      { description: "oldest first; the last one holds now" },
    ),
    totals: t.Object({ inbound: counts(SERIES.inbound), outbound: counts(SERIES.outbound) }, { additionalProperties: false }),
    queue: t.Object({ recipients: t.Integer({ description: "recipients of the account's messages waiting for a delivery attempt" }) }),
    webhook_backlog: t.Object({ events: t.Integer(), oldest_at: t.Union([t.String({ format: "date-time" }), t.Null()]) }),
    complaint_rates: t.Array(
      t.Object(
        {
          outbound_account_id: t.String(),
          delivered: t.Integer({ minimum: 0, description: "messages delivered in the last 24 hours" }),
          complaints: t.Integer({ minimum: 0, description: "spam complaints (ARF reports) received in the last 24 hours" }),
          rate: t.Number({ description: "complaints per delivered message; Gmail and Yahoo refuse bulk senders above 0.003" }),
        },
        { additionalProperties: false },
      ),
      { description: "(beyond) each outbound account's complaint rate over the last 24 hours, whatever the period" },
    ),
    warnings: t.Array(t.String(), { description: "what needs a look, in words" }),
  },
  { additionalProperties: false, title: "Stats" },
);

/** What the routes take of the API's dependencies. */
export type StatsDeps = Pick<ApiDeps, "clock" | "statuses" | "stats" | "health" | "deliverability" | "config">;

export function statsRoutes(deps: StatsDeps) {
  return accountRoutes("stats").get(
    "/stats",
    async ({ account, query }) => {
      // Statuses wait up to 100 ms in their journal; they are counted when stored.
      await deps.statuses.flush();
      const name: PeriodName = query.period ?? "24h";
      const period = PERIODS[name];
      const nowMs = deps.clock.nowMs();
      const from = periodStartMs(period, nowMs);
      const inbound = buckets(await deps.stats.hourly(account.id, "inbound", from), "inbound", period, nowMs);
      const outbound = buckets(await deps.stats.hourly(account.id, "outbound", from), "outbound", period, nowMs);
      const sum = (bs: typeof inbound) =>
        bs.reduce<Record<string, number>>((acc, b) => {
          for (const [k, v] of Object.entries(b.counts)) acc[k] = (acc[k] ?? 0) + v;
          return acc;
        }, {});
      const totals = { inbound: sum(inbound), outbound: sum(outbound) };
      const backlog = await deps.stats.webhookBacklog(account.outbound.map((o) => o.id));
      const domains = await deps.stats.domainsNeedingCare(account.id);
      const rates = await deps.deliverability.complaintRates(account.outbound.map((o) => o.id));
      return {
        period: name,
        bucket_seconds: period.bucketMs / 1000,
        buckets: inbound.map((b, i) => ({ at: isoTime(b.atMs), inbound: b.counts, outbound: outbound[i]!.counts })),
        totals,
        queue: { recipients: await deps.stats.queuedRecipients(account.id) },
        webhook_backlog: { events: backlog.events, oldest_at: backlog.oldestMs === null ? null : isoTime(backlog.oldestMs) },
        complaint_rates: rates.map((r) => ({
          outbound_account_id: r.outboundId,
          delivered: r.deliveries,
          complaints: r.complaints,
          rate: r.rate,
        })),
        warnings: [
          ...overviewWarnings({ ...totals, domains, backlogOldestMs: backlog.oldestMs, nowMs, tls: deps.health().warnings }),
          ...complaintWarnings(rates, deps.config().outbound.complaintRateWarning),
        ],
      };
    },
    {
      query: t.Object({
        period: t.Optional(
          t.Union([t.Literal("24h"), t.Literal("7d")], {
            description: "how far back (default 24h)",
            errorMessage: 'must be "24h" or "7d"',
          }),
        ),
      }),
      response: { 200: StatsSchema, ...errorResponses(401, 403, 422, 429) },
      detail: {
        operationId: "getStats",
        summary: "(beyond) counts for the dashboard's overview",
        tags: ["Stats"],
        security: [{ bearerAPIToken: [] }],
      },
    },
  );
}

/** An hour of webhook backlog is worth a warning: the receiver is down or refusing. */
export const BACKLOG_WARNING_MS = 3_600_000;

/** The overview's warnings, in words (pure). */
export function overviewWarnings(s: {
  inbound: Record<string, number>;
  domains: { unverified: number; failing: number };
  backlogOldestMs: number | null;
  nowMs: number;
  tls: readonly string[];
}): string[] {
  const out = [...s.tls];
  const refused = (s.inbound.rejected ?? 0) + (s.inbound.delayed ?? 0);
  if (refused > 0)
    out.push(
      `${refused} received message${refused === 1 ? " was" : "s were"} not accepted by ${refused === 1 ? "its target" : "their targets"} in this period`,
    );
  if (s.domains.failing > 0)
    out.push(
      `${s.domains.failing} sending domain${s.domains.failing === 1 ? "'s" : "s'"} DNS records fail: sending stops after the grace period`,
    );
  if (s.domains.unverified > 0)
    out.push(`${s.domains.unverified} sending domain${s.domains.unverified === 1 ? " is" : "s are"} not verified yet`);
  if (s.backlogOldestMs !== null && s.nowMs - s.backlogOldestMs >= BACKLOG_WARNING_MS) {
    out.push(`webhook events have waited ${Math.floor((s.nowMs - s.backlogOldestMs) / 3_600_000)} h for the receiver`);
  }
  return out;
}
