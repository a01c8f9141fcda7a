// Incoming statuses go through the journal: readable at once, in SQLite within the move
// interval, stored exactly once even when a run stopped between storing a batch and
// emptying the journal, and never refused while SQLite takes them (a full journal is
// emptied first; a status larger than the journal goes to SQLite directly).
import { afterEach, describe, expect, jest, test } from "bun:test";
import { join } from "node:path";
import { STATUS_JOURNAL_FILE, STATUS_MOVE_INTERVAL_MS, StatusJournal } from "../../../src/inbound/statuses/status-journal.ts";
import { createStatusRepo, journaledStore } from "../../../src/inbound/statuses/statuses.repo.ts";
import type { IncomingStatus } from "../../../src/inbound/statuses/incoming-status.ts";
import { MappedJournal } from "../../../src/store/mapped-journal.ts";
import { openStore, type Store } from "../../../src/store/store.ts";
import { eventually } from "../../helpers/sink.ts";
import { tempDir } from "../../helpers/tmp.ts";

const ACCOUNT = "a000000000000001";
const ADDRESS = "addr0000000000000001";
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanups.splice(0).reverse()) f();
});

function newStore(): Store {
  const d = tempDir();
  const store = openStore(d.path);
  cleanups.push(
    () => d.remove(),
    () => store.close(),
  );
  return store;
}

const status = (n: number, subject = `message ${n}`): IncomingStatus => ({
  id: n.toString(16).padStart(16, "0"),
  accountId: ACCOUNT,
  addressId: ADDRESS,
  messageId: `${n}@sender.test`,
  mailFrom: "alice@sender.test",
  rcptTo: `${ADDRESS}@in.postroom.test`,
  subject,
  status: "delivered",
  statusCategory: "successful",
  tls: null,
  sizeBytes: 1000 + n,
  remoteIp: "192.0.2.1",
  response: null,
  postroomMessageId: null,
  storeUrl: null,
  envelope: null,
  createdAtMs: 1_000_000 + n,
  state: null,
  attempts: null,
  nextAttemptAtMs: null,
});

const journalPath = (store: Store) => join(store.path, "..", STATUS_JOURNAL_FILE);
const inSqlite = (store: Store) =>
  (store.db.query("SELECT id FROM incoming_statuses ORDER BY rowid").all() as { id: string }[]).map((r) => parseInt(r.id, 16));

describe("incoming statuses through the journal", () => {
  test("a recorded status reaches SQLite at the move interval, and is listed at once", async () => {
    const store = newStore();
    const repo = createStatusRepo(store);
    // Bun's fake timers: the interval passes when the test says, however busy the machine is.
    jest.useFakeTimers();
    try {
      await repo.record([status(1), status(2)]);
      jest.advanceTimersByTime(STATUS_MOVE_INTERVAL_MS - 1);
      expect(inSqlite(store)).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(inSqlite(store)).toEqual([1, 2]);
    } finally {
      jest.useRealTimers();
    }
    await repo.record([status(3)]);
    const page = await repo.list(ACCOUNT, ADDRESS, [], { limit: 10 });
    expect(page.items.map((s) => s.subject)).toEqual(["message 3", "message 2", "message 1"]);
    expect(page.items[0]).toEqual(status(3));
    repo.close();
  });

  test("statuses left in the journal by a run that was killed are stored by the next, once each", async () => {
    const store = newStore();
    const first = createStatusRepo(store);
    await first.record([status(1), status(2)]);
    await first.flush();
    first.close();
    // As if the run had been killed after storing 1 and 2 but before emptying the journal,
    // with 3 journaled after them.
    const journal = MappedJournal.open(journalPath(store), 64 * 1024, () => {});
    for (const [n, seq] of [
      [1, 1],
      [2, 2],
      [3, 3],
    ] as const)
      journal.append({ ...status(n), seq });
    journal.close();

    const second = createStatusRepo(store);
    expect(inSqlite(store)).toEqual([1, 2, 3]);
    await second.record([status(4)]);
    await second.flush();
    expect(inSqlite(store)).toEqual([1, 2, 3, 4]);
    second.close();
  });

  test("a status journaled by a version before x_postroom_message_id is stored after an upgrade, with null for it", async () => {
    const store = newStore();
    const journal = MappedJournal.open(journalPath(store), 64 * 1024, () => {});
    // Nor state, attempts and next_attempt_at (issue 35): a journal of that version has none of them.
    const { postroomMessageId: _none, state: _state, attempts: _attempts, nextAttemptAtMs: _next, ...older } = status(1);
    journal.append({ ...older, seq: 1 });
    journal.close();
    const repo = createStatusRepo(store);
    const listed = await repo.list(ACCOUNT, ADDRESS, [], { limit: 10 });
    expect(listed.items).toEqual([status(1)]);
    expect(listed.items[0]!.postroomMessageId).toBeNull();
    repo.close();
  });

  test("a full journal is emptied into SQLite first; a status larger than the journal goes there directly, in order", () => {
    const store = newStore();
    const journal = new StatusJournal(journaledStore(store), journalPath(store), () => {}, 2048);
    for (let n = 1; n <= 12; n++) journal.record([status(n)]);
    // About 400 bytes each: the journal was emptied whenever the next one did not fit.
    const moved = inSqlite(store);
    expect(moved.length).toBeGreaterThanOrEqual(4);
    expect(moved.length).toBeLessThan(12);
    expect(moved).toEqual(Array.from({ length: moved.length }, (_, i) => i + 1));
    journal.record([status(13, "x".repeat(4000))]);
    expect(inSqlite(store)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    journal.record([status(14)]);
    journal.close();
    expect(inSqlite(store)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  test("when SQLite refuses the batch, the statuses stay journaled and are stored on the next try", async () => {
    const store = newStore();
    const failures: unknown[] = [];
    let refuse = true;
    const stored = journaledStore(store);
    const journal = new StatusJournal(
      {
        lastStoredSeq: stored.lastStoredSeq,
        store: (rows) => {
          if (refuse) throw new Error("disk I/O error");
          stored.store(rows);
        },
      },
      journalPath(store),
      (err) => failures.push(err),
    );
    journal.record([status(1)]);
    await eventually(() => failures.length >= 2, 5000, "two refused moves");
    expect(String(failures[0])).toContain("disk I/O error");
    expect(inSqlite(store)).toEqual([]);
    refuse = false;
    await eventually(() => inSqlite(store).length === 1, 5000, "the move after SQLite came back");
    expect(inSqlite(store)).toEqual([1]);
    journal.close();
  });
});
