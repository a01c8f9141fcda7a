// Statuses whose write failed after their targets answered (src/inbound/statuses/status-retry.ts):
// held, written again, counted, and logged when given up.
import { describe, expect, test } from "bun:test";
import { recordAnswered, StatusRetry } from "../../../src/inbound/statuses/status-retry.ts";
import type { IncomingStatus } from "../../../src/inbound/statuses/incoming-status.ts";
import { createLogger } from "../../../src/lib/logger.ts";

const row = (id: string): IncomingStatus => ({
  id,
  accountId: "a",
  addressId: "ad",
  messageId: "m@x",
  mailFrom: "alice@x.test",
  rcptTo: "ad@in.test",
  subject: `s ${id}`,
  status: "200",
  statusCategory: "successful",
  tls: null,
  sizeBytes: 10,
  remoteIp: "127.0.0.1",
  response: null,
  postroomMessageId: "k",
  createdAtMs: 1,
});

function harness(opts: { failures: number; maxRows?: number }) {
  const lines: Record<string, any>[] = [];
  const logger = createLogger({ level: "debug", sink: (l) => lines.push(JSON.parse(l)) }).child({ message_id: "tx1" });
  const written: string[][] = [];
  const counts = { failed: 0, lost: 0 };
  let failuresLeft = opts.failures;
  const retry = new StatusRetry({
    write: async (rows) => {
      if (failuresLeft-- > 0) throw new Error("store gone");
      written.push(rows.map((r) => r.id));
    },
    logger,
    maxRows: () => opts.maxRows ?? 100,
    counted: (outcome, count) => (counts[outcome] += count),
    delaysMs: [20, 40],
  });
  return { retry, lines, written, counts, logger };
}

describe("StatusRetry", () => {
  test("a failed write is logged at error with the message id, counted, and written again", async () => {
    const h = harness({ failures: 1 });
    h.retry.failed([row("s1"), row("s2")], new Error("first write failed"), h.logger);
    expect(h.counts).toEqual({ failed: 2, lost: 0 });
    expect(h.retry.pendingRows).toBe(2);
    expect(h.lines[0]).toMatchObject({ level: "error", message_id: "tx1", status_ids: "s1,s2" });
    // The first retry fails too (failures: 1), the second one stores them.
    await Bun.sleep(150);
    expect(h.written).toEqual([["s1", "s2"]]);
    expect(h.retry.pendingRows).toBe(0);
    expect(h.lines.at(-1)).toMatchObject({ level: "info", msg: "incoming statuses stored on a later try", message_id: "tx1", tries: 3 });
  });

  test("still failing after the last delay: lost, counted, and its line carries the status's fields", async () => {
    const h = harness({ failures: 99 });
    h.retry.failed([row("s1")], new Error("x"), h.logger);
    await Bun.sleep(150);
    expect(h.counts).toEqual({ failed: 1, lost: 1 });
    expect(h.retry.pendingRows).toBe(0);
    const lost = h.lines.at(-1)!;
    expect(lost).toMatchObject({ level: "error", message_id: "tx1", status_ids: "s1" });
    expect(lost.msg).toStartWith("incoming statuses lost: still failing after 3 tries");
    expect(lost.statuses).toEqual([
      {
        id: "s1",
        address_id: "ad",
        message_id_header: "m@x",
        from: "alice@x.test",
        to: "ad@in.test",
        subject: "s s1",
        status: "200",
        x_postroom_message_id: "k",
        created_at_ms: 1,
      },
    ]);
  });

  test("beyond maxRows held, new failures are lost at once", () => {
    const h = harness({ failures: 99, maxRows: 2 });
    h.retry.failed([row("s1"), row("s2")], new Error("x"), h.logger);
    h.retry.failed([row("s3")], new Error("x"), h.logger);
    expect(h.counts).toEqual({ failed: 3, lost: 1 });
    expect(h.retry.pendingRows).toBe(2);
    expect(h.lines.at(-1)!.msg).toBe(
      "incoming statuses lost: more than inbound.status_retry_rows (2) statuses wait already; this line is their only record",
    );
  });

  test("close() writes what is held once more, at once", async () => {
    const h = harness({ failures: 0 });
    h.retry.failed([row("s1")], new Error("x"), h.logger);
    await h.retry.close();
    expect(h.written).toEqual([["s1"]]);
    expect(h.retry.pendingRows).toBe(0);
  });
});

describe("recordAnswered", () => {
  test("a store whose write throws: nothing is thrown (the reply stands), the rows go to the retry", async () => {
    const handed: string[] = [];
    const statuses = { record: async () => Promise.reject(new Error("insert failed")) };
    const statusRetry = { failed: (rows: IncomingStatus[]) => handed.push(...rows.map((r) => r.id)) };
    await recordAnswered([row("s1")], { statuses, statusRetry }, createLogger({ sink: () => {} }));
    expect(handed).toEqual(["s1"]);
  });

  test("a store that takes them: nothing goes to the retry", async () => {
    const handed: string[] = [];
    await recordAnswered(
      [row("s1")],
      { statuses: { record: async () => {} }, statusRetry: { failed: () => handed.push("x") } },
      createLogger({ sink: () => {} }),
    );
    expect(handed).toEqual([]);
  });
});
