// The StatsRepo contract and the counting beside it, run on both engines: createStatsRepo,
// and countInto/countEvents in a transaction (SQLite's synchronous one, as the statuses'
// and the queue's; PostgreSQL's sql.begin). The same cases: counts add
// up per (account, hour, series, key), also when many transactions add to one row at once
// (several nodes); hourly reads one account's series from an hour on; the overview's sums
// of other features' tables (queued recipients, webhook backlog, domains needing care)
// count only that account's rows. Every number reads back a number (toStrictEqual).
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { HOUR_MS, type Series } from "../../src/stats/hourly.ts";
import type { HourlyCount, StatsRepo } from "../../src/stats/stats.port.ts";
import { countEvents, countInto, createStatsRepo } from "../../src/stats/stats.repo.ts";
import { pgTxDb } from "../../src/store/db/pg-db.ts";
import { runOn, runSync } from "../../src/store/db/script.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

type Happening = { accountId: string; atMs: number; series: Series; key: string };
type Event = { messageId: string; kind: string; createdAtMs: number };

interface Opened {
  repo: StatsRepo;
  /** Counts in a transaction of its own, as the statuses' and events' writes do. */
  count(items: Happening[]): Promise<void>;
  countEvents(events: Event[]): Promise<void>;
  /** Seeds other features' rows: plain SQL both engines take. */
  run(statement: string): Promise<void>;
  handle: EngineHandle;
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  if (handle.kind === "sqlite") {
    const db = handle.store.db;
    return {
      handle,
      repo: createStatsRepo(handle.db),
      count: async (items) => db.transaction(() => runSync(db, countInto(items)))(),
      countEvents: async (events) => db.transaction(() => runSync(db, countEvents(events)))(),
      run: async (statement) => void db.run(statement),
    };
  }
  const sql = handle.sql;
  return {
    handle,
    repo: createStatsRepo(handle.db),
    count: (items) => sql.begin((tx) => runOn(pgTxDb(tx), countInto(items))),
    countEvents: (events) => sql.begin((tx) => runOn(pgTxDb(tx), countEvents(events))),
    run: async (statement) => void (await sql.unsafe(statement)),
  };
};

// An hour past 2^32 ms, so a 32-bit column or binding would show.
const H = Math.floor(1_795_000_000_000 / HOUR_MS) * HOUR_MS;
const byHourKey = (rows: HourlyCount[]) => [...rows].sort((a, b) => a.hour - b.hour || (a.key < b.key ? -1 : 1));
const happening = (accountId: string, atMs: number, key: string, series: Series = "inbound"): Happening => ({
  accountId,
  atMs,
  series,
  key,
});

const message = (id: string, accountId: string) =>
  `INSERT INTO outbound_messages (id, account_id, outbound_account_id, mail_from, subject, message_id, to_json, cc_json, tags_json, test_mode, priority, size, created_at)
   VALUES ('${id}', '${accountId}', 'o_${accountId}', 'a@example.com', NULL, '<${id}@example.com>', '[]', '[]', '[]', 0, 'normal', 100, ${H})`;
const recipient = (id: string, messageId: string, state: string) =>
  `INSERT INTO outbound_recipients (id, message_id, position, email, domain, type, status, state, lane, attempts, first_attempt_at, next_attempt_at, locked_by, locked_until)
   VALUES ('${id}', '${messageId}', 0, 'r@example.net', 'example.net', 'to', 'queued', '${state}', 0, 0, NULL, ${H}, NULL, NULL)`;
const outboxEvent = (eventId: string, outboundId: string, state: string, createdAtMs: number) =>
  `INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, batch_id, attempts, next_attempt_at, created_at, target)
   VALUES ('${eventId}', 'acc', '${outboundId}', 'm', 1, '${state}', NULL, 0, ${createdAtMs}, ${createdAtMs}, '${outboundId}')`;
const domain = (id: string, accountId: string, verifiedAt: number | null, failingSince: number | null, deletedAt: number | null = null) =>
  `INSERT INTO sending_domains (id, account_id, domain, dkim_selector, dkim_public_key, dkim_private_key_enc, ed25519_selector, ed25519_public_key, ed25519_private_key_enc, verified_at, failing_since, next_check_at, created_at, deleted_at)
   VALUES ('${id}', '${accountId}', '${id}.example', 's', 'k', 'k', 's', 'k', 'k', ${verifiedAt}, ${failingSince}, ${H}, ${H}, ${deletedAt})`;

describe.each(STORE_ENGINES)("StatsRepo on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const db = (): Opened => opened!;

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["stats_hourly", "outbound_recipients", "outbound_messages", "webhook_outbox", "sending_domains"]);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("counts add up per hour and key; hourly reads one account's series from an hour on, numbers as numbers", async () => {
    await db().count([
      happening("acc_a", H + 5, "successful"),
      happening("acc_a", H + HOUR_MS - 1, "successful"),
      happening("acc_a", H + HOUR_MS, "rejected"),
    ]);
    await db().count([happening("acc_a", H + 10, "successful"), happening("acc_a", H - 1, "delayed")]);
    // Other accounts and series are not read.
    await db().count([happening("acc_b", H, "successful"), happening("acc_a", H, "delivery", "outbound")]);
    expect(byHourKey(await db().repo.hourly("acc_a", "inbound", H))).toStrictEqual([
      { hour: H, key: "successful", count: 3 },
      { hour: H + HOUR_MS, key: "rejected", count: 1 },
    ]);
    expect(byHourKey(await db().repo.hourly("acc_a", "inbound", H - HOUR_MS))).toStrictEqual([
      { hour: H - HOUR_MS, key: "delayed", count: 1 },
      { hour: H, key: "successful", count: 3 },
      { hour: H + HOUR_MS, key: "rejected", count: 1 },
    ]);
    expect(await db().repo.hourly("acc_a", "inbound", H + 1)).toStrictEqual([{ hour: H + HOUR_MS, key: "rejected", count: 1 }]);
    expect(await db().repo.hourly("acc_a", "outbound", 0)).toStrictEqual([{ hour: H, key: "delivery", count: 1 }]);
    expect(await db().repo.hourly("acc_c", "inbound", 0)).toStrictEqual([]);
    expect(await db().repo.hourly("acc_%", "inbound", 0)).toStrictEqual([]);
  });

  it("a count past 2^32 goes on adding exactly", async () => {
    const big = 2 ** 40;
    await db().run(
      `INSERT INTO stats_hourly (account_id, hour, series, key, count) VALUES ('acc_a', ${H}, 'inbound', 'successful', ${big})`,
    );
    await db().count([happening("acc_a", H, "successful")]);
    expect(await db().repo.hourly("acc_a", "inbound", H)).toStrictEqual([{ hour: H, key: "successful", count: big + 1 }]);
  });

  it("many transactions adding to the same rows at once lose no count", async () => {
    const TRANSACTIONS = 24;
    await Promise.all(
      Array.from({ length: TRANSACTIONS }, (_, i) =>
        // Half list the rows in the other order: the same rows, locked in one order.
        db().count(
          i % 2
            ? [happening("acc_a", H, "successful"), happening("acc_a", H, "rejected"), happening("acc_a", H, "rejected")]
            : [happening("acc_a", H, "rejected"), happening("acc_a", H, "rejected"), happening("acc_a", H, "successful")],
        ),
      ),
    );
    expect(byHourKey(await db().repo.hourly("acc_a", "inbound", H))).toStrictEqual([
      { hour: H, key: "rejected", count: 2 * TRANSACTIONS },
      { hour: H, key: "successful", count: TRANSACTIONS },
    ]);
  });

  it("outbound events are counted for their message's account; an event of an unknown message is not counted", async () => {
    await db().run(message("m1", "acc_a"));
    await db().run(message("m2", "acc_b"));
    await db().countEvents([
      { messageId: "m1", kind: "delivery", createdAtMs: H },
      { messageId: "m1", kind: "open", createdAtMs: H + 1 },
      { messageId: "m2", kind: "delivery", createdAtMs: H },
      { messageId: "m1", kind: "delivery", createdAtMs: H + HOUR_MS },
      { messageId: "unknown", kind: "delivery", createdAtMs: H },
    ]);
    await db().countEvents([]);
    expect(byHourKey(await db().repo.hourly("acc_a", "outbound", 0))).toStrictEqual([
      { hour: H, key: "delivery", count: 1 },
      { hour: H, key: "open", count: 1 },
      { hour: H + HOUR_MS, key: "delivery", count: 1 },
    ]);
    expect(await db().repo.hourly("acc_b", "outbound", 0)).toStrictEqual([{ hour: H, key: "delivery", count: 1 }]);
  });

  it("deliveries and complaints are counted per outbound account too; outboundAccountCounts sums them from an hour on", async () => {
    await db().run(message("m1", "acc_a"));
    await db().run(message("m2", "acc_b"));
    await db().countEvents([
      { messageId: "m1", kind: "delivery", createdAtMs: H - HOUR_MS },
      { messageId: "m1", kind: "delivery", createdAtMs: H },
      { messageId: "m1", kind: "delivery", createdAtMs: H + HOUR_MS },
      { messageId: "m1", kind: "complaint", createdAtMs: H + HOUR_MS + 5 },
      { messageId: "m1", kind: "open", createdAtMs: H },
      { messageId: "m2", kind: "delivery", createdAtMs: H },
    ]);
    const sorted = (rows: { outboundId: string; key: string; count: number }[]) =>
      [...rows].sort((a, b) => (a.outboundId + a.key < b.outboundId + b.key ? -1 : 1));
    expect(sorted(await db().repo.outboundAccountCounts(["o_acc_a", "o_acc_b"], H))).toStrictEqual([
      { outboundId: "o_acc_a", key: "complaint", count: 1 },
      { outboundId: "o_acc_a", key: "delivery", count: 2 },
      { outboundId: "o_acc_b", key: "delivery", count: 1 },
    ]);
    expect(await db().repo.outboundAccountCounts(["o_acc_b"], H + HOUR_MS)).toStrictEqual([]);
    expect(await db().repo.outboundAccountCounts([], 0)).toStrictEqual([]);
    // The account's own outbound series is as before.
    expect(byHourKey(await db().repo.hourly("acc_a", "outbound", H))).toStrictEqual([
      { hour: H, key: "delivery", count: 1 },
      { hour: H, key: "open", count: 1 },
      { hour: H + HOUR_MS, key: "complaint", count: 1 },
      { hour: H + HOUR_MS, key: "delivery", count: 1 },
    ]);
  });

  it("queuedRecipients counts the account's recipients waiting for an attempt only", async () => {
    await db().run(message("m1", "acc_a"));
    await db().run(message("m2", "acc_a"));
    await db().run(message("m3", "acc_b"));
    for (const [id, m, state] of [
      ["r1", "m1", "queued"],
      ["r2", "m1", "queued"],
      ["r3", "m2", "queued"],
      ["r4", "m2", "sending"],
      ["r5", "m2", "done"],
      ["r6", "m3", "queued"],
    ]) {
      await db().run(recipient(id!, m!, state!));
    }
    expect(await db().repo.queuedRecipients("acc_a")).toBe(3);
    expect(await db().repo.queuedRecipients("acc_b")).toBe(1);
    expect(await db().repo.queuedRecipients("acc_c")).toBe(0);
  });

  it("webhookBacklog counts the pending events of the outbound accounts named, and the oldest's time", async () => {
    await db().run(outboxEvent("e1", "o1", "pending", H + 10));
    await db().run(outboxEvent("e2", "o2", "pending", H + 5));
    await db().run(outboxEvent("e3", "o1", "sent", H));
    await db().run(outboxEvent("e4", "o3", "pending", H - 100));
    await db().run(outboxEvent("e5", "o1", "expired", H - 50));
    expect(await db().repo.webhookBacklog(["o1", "o2"])).toStrictEqual({ events: 2, oldestMs: H + 5 });
    expect(await db().repo.webhookBacklog(["o1"])).toStrictEqual({ events: 1, oldestMs: H + 10 });
    expect(await db().repo.webhookBacklog(["o4"])).toStrictEqual({ events: 0, oldestMs: null });
    expect(await db().repo.webhookBacklog([])).toStrictEqual({ events: 0, oldestMs: null });
    expect(await db().repo.webhookBacklog(["o%"])).toStrictEqual({ events: 0, oldestMs: null });
  });

  it("domainsNeedingCare counts the account's unverified and failing domains, not deleted ones", async () => {
    await db().run(domain("d1", "acc_a", null, null));
    await db().run(domain("d2", "acc_a", null, null));
    await db().run(domain("d3", "acc_a", H, H + 1));
    await db().run(domain("d4", "acc_a", H, null));
    await db().run(domain("d5", "acc_a", null, null, H));
    await db().run(domain("d6", "acc_a", H, H, H));
    await db().run(domain("d7", "acc_b", null, null));
    // failing_since without verified_at: unverified, not failing.
    await db().run(domain("d8", "acc_b", null, H));
    expect(await db().repo.domainsNeedingCare("acc_a")).toStrictEqual({ unverified: 2, failing: 1 });
    expect(await db().repo.domainsNeedingCare("acc_b")).toStrictEqual({ unverified: 2, failing: 0 });
    expect(await db().repo.domainsNeedingCare("acc_c")).toStrictEqual({ unverified: 0, failing: 0 });
  });
  it("a call with more counts than one statement takes stores them all, each added to its row", async () => {
    // 1,201 hours of one key: three multi-row upserts (500 rows each at most), counted twice.
    const items = Array.from({ length: 1201 }, (_, i) => happening("acc_many", H + i * HOUR_MS, "successful"));
    await db().count(items);
    await db().count(items);
    const rows = await db().repo.hourly("acc_many", "inbound", 0);
    expect(rows.length).toBe(1201);
    expect(rows.every((r) => r.count === 2)).toBe(true);
  });
});
