// The retention purge on both engines: SQLite (retentionPurges) and PostgreSQL
// (pgRetentionPurges), each run by the RetentionPurge job as the appliance runs it. A
// store holding 90 days of traffic of three accounts, written through each engine's
// repositories as the appliance writes it (thousands of rows: statuses, messages with
// their recipients, bodies, events and webhook outbox rows, late opens, idempotency keys,
// domain checks, MTA-STS policies refreshed in place, webhook POSTs, hourly counts). Each
// row is written with what must become of it (gone past its table's retention; kept when
// younger, or still needed: a message still queued, events its webhook has not been sent,
// a key still waiting for its answer). After one run, with windows much smaller than the
// tables, exactly the rows past their retention are gone on both engines, and the two
// engines hold the same rows; a second run finds nothing.
import { afterAll, describe, expect } from "bun:test";
import { createSendingDomainRepo } from "../../src/domains/sending-domains.repo.ts";
import { createEventRepo, recordEvents } from "../../src/events/events.repo.ts";
import type { NewEvent } from "../../src/events/message-event.ts";
import { createPgOutboxRepo } from "../../src/events/outbox.pg.repo.ts";
import { createOutboxRepo } from "../../src/events/outbox.repo.ts";
import { createWebhookPostRepo } from "../../src/events/webhook-posts.repo.ts";
import { createPgStatusRepo } from "../../src/inbound/statuses/statuses.pg.repo.ts";
import { createStatusRepo } from "../../src/inbound/statuses/statuses.repo.ts";
import { RetentionPurge } from "../../src/jobs/retention-purge.ts";
import type { RetentionSettings, RetentionTable } from "../../src/jobs/retention.ts";
import { retentionPurges } from "../../src/jobs/retention-tables.ts";
import { pgRetentionPurges } from "../../src/jobs/retention-tables.pg.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { createStsRepo } from "../../src/outbound/delivery/mta-sts.repo.ts";
import { createPgQueueLeases } from "../../src/outbound/queue/queue.pg.repo.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import { createIdempotencyRepo, recordAnswer } from "../../src/outbound/sending/idempotency.repo.ts";
import { pgTxDb } from "../../src/store/db/pg-db.ts";
import { runOn } from "../../src/store/db/script.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { DAY, DEFAULTS, sendingDomain, status, T0 } from "./retention-rows.ts";

const DAYS = 90;
const NOW = T0 + DAYS * DAY;
const HOUR = 3_600_000;
const SETTINGS: RetentionSettings = {
  ...DEFAULTS,
  keepMs: {
    incoming_statuses: 30 * DAY,
    messages: 60 * DAY,
    bodies: 7 * DAY,
    events: 45 * DAY,
    webhook_outbox: DAY,
    domain_events: 30 * DAY,
    mta_sts_policies: DAY,
    stats: 60 * DAY,
    idempotency_keys: DAY,
    webhook_posts: 7 * DAY,
  },
  // Windows much smaller than the tables, and not a divisor of anything here.
  batchSize: 97,
};
const cutoff = (table: RetentionTable) => NOW - SETTINGS.keepMs[table]!;
/** Outbound accounts: o1's webhook got every event, o2 has no webhook, o3's webhook has not been sent one yet. */
const ACCOUNTS = [1, 2, 3].map((i) => ({ accountId: `a${i}`, outboundAccountId: `o${i}`, webhook: i !== 2, posted: i === 1 }));

function openRepos(h: EngineHandle, clock: ManualClock) {
  if (h.kind === "sqlite") {
    const { store } = h;
    return {
      statuses: createStatusRepo(store),
      queue: createOutboundRepo(store, queuePorts(store)),
      events: createEventRepo(h.db),
      outbox: createOutboxRepo(store),
      domains: createSendingDomainRepo(h.db),
      sts: createStsRepo(h.db, clock),
      keys: createIdempotencyRepo(h.logDb),
      posts: createWebhookPostRepo(h.db),
      purges: retentionPurges(store),
      rows: async (query: string) => store.db.query(query).all() as Record<string, unknown>[],
    };
  }
  const { sql } = h;
  const suppress = async () => {
    throw new Error("no suppression here");
  };
  return {
    statuses: createPgStatusRepo(sql),
    queue: createPgQueueLeases(sql, {
      events: { record: (tx, events, opts) => runOn(pgTxDb(tx), recordEvents(events, opts)) },
      suppressions: { suppress },
      answers: { record: (tx, answer, nowMs) => runOn(pgTxDb(tx), recordAnswer(answer, nowMs)) },
    }),
    events: createEventRepo(h.db),
    outbox: createPgOutboxRepo(sql),
    domains: createSendingDomainRepo(h.db),
    sts: createStsRepo(h.db, clock),
    keys: createIdempotencyRepo(h.logDb),
    posts: createWebhookPostRepo(h.db),
    purges: pgRetentionPurges(sql),
    rows: async (query: string) => (await sql.unsafe(query)) as Record<string, unknown>[],
  };
}

/** Each table's rows as keys (what tells them apart), and the query that reads them, the same on both engines. */
const TABLE_KEYS: Record<string, string> = {
  incoming_statuses: "SELECT id AS k FROM incoming_statuses",
  outbound_messages: "SELECT id AS k FROM outbound_messages",
  outbound_recipients: "SELECT id AS k FROM outbound_recipients",
  outbound_message_bodies: "SELECT message_id AS k FROM outbound_message_bodies",
  message_events: "SELECT recipient_id || '/' || kind AS k FROM message_events",
  // Through its event: an outbox row left without one would be missed here, hence the count below.
  webhook_outbox: "SELECT e.recipient_id || '/' || e.kind AS k FROM webhook_outbox o JOIN message_events e ON e.id = o.event_id",
  sending_domain_events: "SELECT domain_id || '@' || created_at AS k FROM sending_domain_events",
  mta_sts_policies: "SELECT domain AS k FROM mta_sts_policies",
  stats_hourly: "SELECT account_id || '/' || hour || '/' || series || '/' || key AS k FROM stats_hourly",
  idempotency_keys: "SELECT key AS k FROM idempotency_keys",
  webhook_posts: "SELECT batch_id AS k FROM webhook_posts",
};

type Snapshot = Record<string, string[]>;
const snapshots: Record<string, Snapshot> = {};

async function snapshot(rows: (query: string) => Promise<Record<string, unknown>[]>): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const [table, query] of Object.entries(TABLE_KEYS)) out[table] = (await rows(query)).map((r) => String(r.k)).sort();
  const [outbox] = await rows("SELECT COUNT(*) AS n FROM webhook_outbox");
  expect(Number(outbox!.n)).toBe(out.webhook_outbox!.length);
  return out;
}

/** What the store must hold after the purge, table by table, written down as each row is seeded. */
class Expected {
  readonly kept: Record<string, Set<string>> = Object.fromEntries(Object.keys(TABLE_KEYS).map((t) => [t, new Set<string>()]));
  readonly seeded: Record<string, Set<string>> = Object.fromEntries(Object.keys(TABLE_KEYS).map((t) => [t, new Set<string>()]));
  /** A row seeded (or rewritten in place: the last word counts) and whether the purge keeps it. */
  row(table: string, key: string, kept: boolean) {
    this.seeded[table]!.add(key);
    if (kept) this.kept[table]!.add(key);
    else this.kept[table]!.delete(key);
  }
  static sorted(sets: Record<string, Set<string>>): Snapshot {
    return Object.fromEntries(Object.entries(sets).map(([t, keys]) => [t, [...keys].sort()]));
  }
}

async function seed(repos: ReturnType<typeof openRepos>, clock: ManualClock): Promise<Expected> {
  const expected = new Expected();
  const young = (table: RetentionTable, atMs: number) => atMs >= cutoff(table);

  for (const a of ACCOUNTS) await repos.domains.insert(sendingDomain(`dom-${a.accountId}`, a.accountId, `${a.accountId}.test`, T0));
  // A key claimed at the start and never answered (its request still running): kept whatever its age.
  await repos.keys.claim({ outboundAccountId: "o1", scope: "api", key: "k-in-flight" }, T0, null);
  expected.row("idempotency_keys", "k-in-flight", true);

  for (let day = 0; day < DAYS; day++) {
    const dayMs = T0 + day * DAY;
    clock.set(dayMs);
    if (dayMs === cutoff("incoming_statuses")) {
      // Two statuses either side of the statuses' cutoff, as they come: one millisecond older goes, the cutoff itself stays.
      await repos.statuses.record([status("s-edge-older", dayMs - 1, "a1", "addr-a1"), status("s-edge-at", dayMs, "a1", "addr-a1")]);
      expected.row("incoming_statuses", "s-edge-older", false);
      expected.row("incoming_statuses", "s-edge-at", true);
    }
    await Promise.all(ACCOUNTS.map((a) => seedAccountDay(repos, expected, a, day, dayMs)));
    // MTA-STS: a policy a day, valid three days; every 15th day a policy of 10 days ago is
    // refreshed in place for 20 days (the table leaves expiry order).
    const policy = (id: string, expiresAtMs: number) => ({
      id,
      mode: "enforce" as const,
      mx: ["mx.example"],
      maxAgeSeconds: 86_400,
      expiresAtMs,
    });
    await repos.sts.put(`d${day}.example`, policy(`p${day}`, dayMs + 3 * DAY));
    expected.row("mta_sts_policies", `d${day}.example`, young("mta_sts_policies", dayMs + 3 * DAY));
    if (day % 15 === 14) {
      await repos.sts.put(`d${day - 10}.example`, policy(`p${day}-refresh`, dayMs + 20 * DAY));
      expected.row("mta_sts_policies", `d${day - 10}.example`, young("mta_sts_policies", dayMs + 20 * DAY));
    }
  }
  await repos.statuses.flush();

  // o1's webhook takes every event; o3's events wait.
  clock.set(NOW);
  for (;;) {
    const batch = await repos.outbox.claimBatch("o1", NOW, 500, 60_000);
    if (!batch) break;
    expect(await repos.outbox.finishSent(batch.lease)).toBe(true);
  }
  return expected;
}

async function seedAccountDay(
  repos: ReturnType<typeof openRepos>,
  expected: Expected,
  a: (typeof ACCOUNTS)[number],
  day: number,
  dayMs: number,
) {
  const young = (table: RetentionTable, atMs: number) => atMs >= cutoff(table);
  // Eight incoming statuses, three hours apart (so they count in eight hourly rows).
  const statuses = [0, 1, 2, 3, 4, 5, 6, 7].map((k) =>
    status(`s-${a.accountId}-${day}-${k}`, dayMs + k * 3 * HOUR, a.accountId, `addr-${a.accountId}`),
  );
  await repos.statuses.record(statuses);
  for (const s of statuses) expected.row("incoming_statuses", s.id, young("incoming_statuses", s.createdAtMs));

  // A message sent through the API with an idempotency key, delivered at once; every tenth
  // day another that is still queued (retried in 60 days).
  const sends = [{ id: `m-${a.accountId}-${day}`, queued: false }];
  if (day % 10 === 0) sends.push({ id: `m-${a.accountId}-${day}-queued`, queued: true });
  for (const m of sends) {
    const atMs = dayMs + HOUR;
    const ref = { outboundAccountId: a.outboundAccountId, scope: "api" as const, key: `k-${m.id}` };
    expect(await repos.keys.claim(ref, atMs, SETTINGS.keepMs.idempotency_keys)).toEqual({ kind: "claim" });
    const rid = `r-${m.id}`;
    const ev = (kind: NewEvent["kind"]): NewEvent => ({ messageId: m.id, recipientId: rid, kind, details: {}, createdAtMs: atMs });
    const recipient = m.queued
      ? queuedRecipient(rid, m.id, {
          status: "soft_bounce",
          // Every twentieth day's is held by the operator: kept as a queued one is.
          state: day % 20 === 0 ? "held" : "queued",
          attempts: 1,
          firstAttemptAtMs: atMs,
          nextAttemptAtMs: atMs + 60 * DAY,
        })
      : queuedRecipient(rid, m.id, { status: "delivery", state: "done", attempts: 1, firstAttemptAtMs: atMs, nextAttemptAtMs: atMs });
    await repos.queue.insert(
      queuedMessage(m.id, { accountId: a.accountId, outboundAccountId: a.outboundAccountId, createdAtMs: atMs }),
      [recipient],
      [ev("registration"), ev(m.queued ? "soft_bounce" : "delivery")],
      {
        raw: Buffer.from(`raw ${m.id}`),
        webhook: a.webhook,
        answer: { ...ref, requestSha256: "0".repeat(64), answer: `{"id":"${m.id}"}` },
      },
    );
    expected.row("idempotency_keys", ref.key, young("idempotency_keys", atMs));
    // Kept whatever its age: still queued, or with events its webhook has not been sent.
    const needed = m.queued || (a.webhook && !a.posted);
    const messageKept = needed || young("messages", atMs);
    expected.row("outbound_messages", m.id, messageKept);
    expected.row("outbound_recipients", rid, messageKept);
    expected.row("outbound_message_bodies", m.id, messageKept && (m.queued || young("bodies", atMs)));
    for (const kind of ["registration", m.queued ? "soft_bounce" : "delivery"])
      eventRow(expected, a, `${rid}/${kind}`, atMs, messageKept, m.queued);
  }
  // Yesterday's delivered message is opened today (an event added later than its message).
  if (day > 0) {
    const id = `m-${a.accountId}-${day - 1}`;
    const sentAtMs = dayMs - DAY + HOUR;
    const atMs = dayMs + 2 * HOUR;
    await repos.events.record([{ messageId: id, recipientId: `r-${id}`, kind: "open", details: {}, createdAtMs: atMs }], {
      webhook: a.webhook,
    });
    eventRow(expected, a, `r-${id}/open`, atMs, (a.webhook && !a.posted) || young("messages", sentAtMs), false);
  }
  await repos.domains.recordCheck(
    `dom-${a.accountId}`,
    {
      checks: { dkim: false, ed25519: false, return_path: false, spf: false },
      reasons: {},
      health: null,
      verifiedAtMs: null,
      failingSinceMs: null,
      checkedAtMs: dayMs + 4 * HOUR,
      nextCheckAtMs: dayMs + DAY,
    },
    [{ kind: "checked", details: {} }],
  );
  expected.row("sending_domain_events", `dom-${a.accountId}@${dayMs + 4 * HOUR}`, young("domain_events", dayMs + 4 * HOUR));
  const batchId = `b-${a.accountId}-${day}`;
  await repos.posts.record({
    outboundAccountId: a.outboundAccountId,
    batchId,
    events: 2,
    test: false,
    status: 200,
    problem: "",
    durationMs: 3,
    createdAtMs: dayMs + 5 * HOUR,
  });
  expected.row("webhook_posts", batchId, young("webhook_posts", dayMs + 5 * HOUR));
}

/** An event of a message kept or not, and its webhook outbox row (for an outbound account with a webhook). */
function eventRow(expected: Expected, a: (typeof ACCOUNTS)[number], key: string, atMs: number, messageKept: boolean, queued: boolean) {
  const pending = a.webhook && !a.posted;
  const kept = messageKept && (queued || pending || atMs >= cutoff("events"));
  expected.row("message_events", key, kept);
  if (a.webhook) expected.row("webhook_outbox", key, kept && (pending || atMs >= cutoff("webhook_outbox")));
}

describe.each(STORE_ENGINES)("retention purge on $name", (engine) => {
  engine.test(
    "90 days of three accounts: exactly what is past its retention goes, the queued and the unposted stay; a second run finds nothing",
    async () => {
      const h = await engine.open();
      try {
        const clock = new ManualClock(T0);
        const repos = openRepos(h, clock);
        const expected = await seed(repos, clock);
        const before = await snapshot(repos.rows);
        // Every row seeded is there (the keys above tell them apart), and there are thousands.
        expect<Snapshot>({ ...before, stats_hourly: [] }).toEqual(Expected.sorted(expected.seeded));
        expect(Object.values(before).reduce((n, keys) => n + keys.length, 0)).toBeGreaterThan(8_000);

        const job = new RetentionPurge({ purges: repos.purges, clock, logger: silentLogger, settings: () => SETTINGS });
        const deleted = await job.run();
        const after = await snapshot(repos.rows);

        // The hourly counts go by their hour.
        const statsCutoff = cutoff("stats");
        const keptStats = before.stats_hourly!.filter((k) => Number(k.split("/")[1]) >= statsCutoff);
        expect(keptStats.length).toBeGreaterThan(0);
        expect(keptStats.length).toBeLessThan(before.stats_hourly!.length);
        expect(after).toEqual({ ...Expected.sorted(expected.kept), stats_hourly: keptStats });
        // The counts the job reports, for the tables only their own purge deletes from.
        const gone = (table: string) => before[table]!.length - after[table]!.length;
        expect(deleted).toMatchObject({
          incoming_statuses: gone("incoming_statuses"),
          messages: gone("outbound_messages"),
          bodies: gone("outbound_message_bodies") - gone("outbound_messages"),
          domain_events: gone("sending_domain_events"),
          mta_sts_policies: gone("mta_sts_policies"),
          stats: gone("stats_hourly"),
          idempotency_keys: gone("idempotency_keys"),
          webhook_posts: gone("webhook_posts"),
        });
        for (const [table, n] of Object.entries(deleted)) expect({ table, some: n > 0 }).toEqual({ table, some: true });

        expect(Object.values(await job.run()).reduce((a, b) => a + b)).toBe(0);
        await repos.statuses.flush();
        repos.statuses.close();
        snapshots[engine.name] = after;
      } finally {
        await h.close();
      }
    },
    180_000,
  );
});

afterAll(() => {
  // Both engines ran here: they hold the same rows.
  const [sqlite, pg] = [snapshots.SQLite, snapshots.PostgreSQL];
  if (sqlite && pg) expect(pg).toEqual(sqlite);
});
