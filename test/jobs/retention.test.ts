// Retention decisions: which cutoff each table gets, how a purge window is planned, and
// what the [retention] keys accept.
import { describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import { purgeCutoffs, type RetentionSettings } from "../../src/jobs/retention.ts";
import { planWindow, type WindowRow } from "../../src/store/purge-window.ts";
import { testConfigToml } from "../helpers/fixtures.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-12-01T00:00:00Z");

const keep = (overrides: Partial<RetentionSettings["keepMs"]> = {}): RetentionSettings["keepMs"] => ({
  incoming_statuses: 30 * DAY,
  messages: 30 * DAY,
  bodies: 7 * DAY,
  events: 30 * DAY,
  webhook_outbox: DAY,
  domain_events: 30 * DAY,
  mta_sts_policies: DAY,
  stats: 400 * DAY,
  idempotency_keys: DAY,
  webhook_posts: 7 * DAY,
  ...overrides,
});

describe("purgeCutoffs", () => {
  test.each([
    [
      "defaults",
      keep(),
      {
        incoming_statuses: NOW - 30 * DAY,
        messages: NOW - 30 * DAY,
        bodies: NOW - 7 * DAY,
        events: NOW - 30 * DAY,
        webhook_outbox: NOW - DAY,
        domain_events: NOW - 30 * DAY,
        mta_sts_policies: NOW - DAY,
        stats: NOW - 400 * DAY,
        idempotency_keys: NOW - DAY,
        webhook_posts: NOW - 7 * DAY,
      },
    ],
    ["statuses off", keep({ incoming_statuses: null }), { incoming_statuses: null }],
    [
      "everything off",
      keep({
        incoming_statuses: null,
        messages: null,
        bodies: null,
        events: null,
        webhook_outbox: null,
        domain_events: null,
        mta_sts_policies: null,
        stats: null,
        idempotency_keys: null,
        webhook_posts: null,
      }),
      { messages: null, bodies: null, mta_sts_policies: null, stats: null, idempotency_keys: null, webhook_posts: null },
    ],
    [
      "bodies kept longer than messages (the message's purge takes its body)",
      keep({ bodies: 90 * DAY }),
      { bodies: NOW - 90 * DAY, messages: NOW - 30 * DAY },
    ],
    ["an hour", keep({ events: 3_600_000 }), { events: NOW - 3_600_000 }],
  ])("%s", (_name, keepMs, expected) => {
    expect(purgeCutoffs(NOW, keepMs)).toMatchObject(expected);
  });
});

describe("planWindow", () => {
  const row = (rowid: number, at: number, keepRow = false): WindowRow => ({ rowid, at, keep: keepRow ? 1 : 0 });
  const CUT = 100;
  test.each([
    ["empty table", [], 3, true, [], null],
    ["a full window of old rows: all go, walk on", [row(1, 10), row(2, 20), row(3, 30)], 3, true, [1, 2, 3], 3],
    ["a short window: the end of the table", [row(7, 10), row(8, 200)], 3, true, [7], null],
    ["a full window of young rows: the rest is younger", [row(4, 100), row(5, 150), row(6, 200)], 3, true, [], null],
    ["a young row among old ones (out of order): walk on", [row(4, 50), row(5, 150), row(6, 60)], 3, true, [4, 6], 6],
    ["rows still needed are stepped over, not an end", [row(1, 10, true), row(2, 20, true), row(3, 30, true)], 3, true, [], 3],
    ["needed and old mixed", [row(1, 10, true), row(2, 20), row(3, 300)], 3, true, [2], 3],
    ["not in time order: young rows do not end the walk", [row(4, 100), row(5, 150), row(6, 200)], 3, false, [], 6],
    ["not in time order, short window", [row(4, 50), row(5, 150)], 3, false, [4], null],
  ])("%s", (_name, rows, limit, ordered, removed, next) => {
    const plan = planWindow(rows, CUT, limit, ordered);
    expect({ removed: plan.remove.map((r) => r.rowid), next: plan.next }).toEqual({ removed, next });
  });
});

describe("[retention] keys", () => {
  const parse = (section: string) => parseConfigText(testConfigToml({ dataDir: "/tmp/x", extra: `[retention]\n${section}` }));

  test("defaults: bodies 7 days; statuses, messages, events, domain events 30; outbox, expired MTA-STS policies and idempotency keys 1; every 10 minutes, 1,000 rows, 50 ms apart", () => {
    const r = parse("");
    expect(r.ok && r.config.retention).toEqual({
      keepMs: {
        incoming_statuses: 30 * DAY,
        messages: 30 * DAY,
        bodies: 7 * DAY,
        events: 30 * DAY,
        webhook_outbox: DAY,
        domain_events: 30 * DAY,
        mta_sts_policies: DAY,
        stats: 400 * DAY,
        idempotency_keys: DAY,
        webhook_posts: 7 * DAY,
      },
      intervalMs: 600_000,
      batchSize: 1000,
      batchPauseMs: 50,
    });
  });

  test('"off" keeps a table forever; other durations in any unit', () => {
    const r = parse('incoming_statuses = "off"\nbodies = "36h"\ninterval = "30s"\nbatch_pause = "0ms"');
    expect(r.ok && r.config.retention).toMatchObject({
      keepMs: { incoming_statuses: null, bodies: 36 * 3_600_000 },
      intervalMs: 30_000,
      batchPauseMs: 0,
    });
  });

  test.each([
    ['messages = "0d"', 'retention.messages: must be a duration above zero such as "7d" or "30d", or "off" to keep forever'],
    ['events = "0"', 'retention.events: must be a duration above zero such as "7d" or "30d", or "off" to keep forever'],
    ['bodies = "forever"', 'retention.bodies: must be a duration above zero such as "7d" or "30d", or "off" to keep forever'],
    ['interval = "0s"', 'retention.interval: must be a duration above zero such as "10m"'],
    ['interval = "off"', 'retention.interval: must be a duration above zero such as "10m"'],
    ["batch_size = 0", "retention.batch_size: must be an integer from 1 to 100000"],
  ])("%s is refused", (line, problem) => {
    const r = parse(line);
    expect(r.ok ? [] : r.problems).toEqual([problem]);
  });
});
