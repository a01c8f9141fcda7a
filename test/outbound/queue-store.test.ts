// The queue's storage: raw messages kept with their rows (large ones too), leases that
// need no fsync. (Its grouped commits: test/store/group-commit.test.ts.)
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import { openStore } from "../../src/store/store.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("the queue's raw messages", () => {
  const dir = tempDir();
  const store = openStore(dir.path);
  const repo = createOutboundRepo(store, queuePorts(store));
  afterAll(() => {
    store.close();
    dir.remove();
  });
  const message = (id: string) => queuedMessage(id);
  const recipient = (id: string, messageId: string) => queuedRecipient(id, messageId);

  test("stored with the message, a 10 MB one byte for byte", async () => {
    const big = randomBytes(10 * 1024 * 1024);
    await repo.insert(message("m-big"), [recipient("r-big", "m-big")], [], { raw: big });
    expect((await repo.rawMessage("m-big"))!.equals(big)).toBe(true);
    expect((await repo.claimDue("w1", 1, 1000, 10, [])).map((c) => c.message.id)).toEqual(["m-big"]);
  });

  test("a message whose rows fail is not stored at all, raw bytes included", async () => {
    // Same recipient ID twice: the second insert fails as a whole.
    await expect(repo.insert(message("m-dup"), [recipient("r-big", "m-dup")], [], { raw: Buffer.from("x") })).rejects.toThrow();
    expect(await repo.rawMessage("m-dup")).toBeNull();
    expect(await repo.getMessageById("m-dup")).toBeNull();
  });
});

describe("the queue as /metrics reads it", () => {
  const dir = tempDir();
  const store = openStore(dir.path);
  const repo = createOutboundRepo(store, queuePorts(store));
  afterAll(() => {
    store.close();
    dir.remove();
  });

  test("empty: nothing due, nothing scheduled", async () => {
    expect(await repo.nextDueMs()).toBeNull();
    expect(await repo.queueDepth(1000)).toEqual({ due: 0, scheduled: 0, held: 0 });
  });

  test("the first due time across every lane, and the queued recipients split at a time; done ones are not counted", async () => {
    const rows = [
      { id: "r-digest", lane: 2, nextAttemptAtMs: 500 },
      { id: "r-standard", lane: 1, nextAttemptAtMs: 300 },
      { id: "r-priority", lane: 0, nextAttemptAtMs: 900 },
      { id: "r-done", lane: 0, nextAttemptAtMs: 100, state: "done" as const },
    ];
    for (const r of rows) await repo.insert(queuedMessage(`m-${r.id}`), [queuedRecipient(r.id, `m-${r.id}`, r)], []);
    expect(await repo.nextDueMs()).toBe(300);
    expect(await repo.queueDepth(299)).toEqual({ due: 0, scheduled: 3, held: 0 });
    expect(await repo.queueDepth(500)).toEqual({ due: 2, scheduled: 1, held: 0 });
    expect(await repo.queueDepth(900)).toEqual({ due: 3, scheduled: 0, held: 0 });
  });
});
