// The queue's storage: grouped durable commits, raw messages kept with their rows (large
// ones too), leases that need no fsync.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { GroupCommit } from "../../src/outbound/group-commit.ts";
import { createOutboundRepo } from "../../src/outbound/outbound.repo.ts";
import { openStore } from "../../src/store/store.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("GroupCommit", () => {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)");
  const commits = new GroupCommit(db, 5);
  const insert = (x: number) => () => db.query("INSERT INTO t VALUES (?)").run(x).changes;
  const rows = () => (db.query("SELECT x FROM t ORDER BY x").all() as { x: number }[]).map((r) => r.x);

  test("writes within the window share one transaction; each settles only after its commit", async () => {
    let settled = 0;
    const all = [1, 2, 3].map((x) => commits.run(insert(x)).then((v) => (settled++, v)));
    await Bun.sleep(0);
    expect(settled).toBe(0);
    expect(rows()).toEqual([]);
    expect(await Promise.all(all)).toEqual([1, 1, 1]);
    expect(rows()).toEqual([1, 2, 3]);
  });

  test("a write that fails is rolled back alone", async () => {
    const results = await Promise.allSettled([commits.run(insert(4)), commits.run(insert(1)), commits.run(() => (insert(5)(), insert(5)())), commits.run(insert(6))]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    // The failing write's own first insert (5) is gone with it.
    expect(rows()).toEqual([1, 2, 3, 4, 6]);
  });

  test("a failed commit rejects every write of the batch; flush commits at once", async () => {
    const closed = new Database(":memory:");
    closed.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    const c = new GroupCommit(closed, 1000);
    const pending = Promise.allSettled([c.run(() => 1), c.run(() => 2)]);
    closed.close();
    c.flush();
    expect((await pending).map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});

describe("the queue's raw messages", () => {
  const dir = tempDir();
  const store = openStore(dir.path);
  const repo = createOutboundRepo(store);
  afterAll(() => {
    store.close();
    dir.remove();
  });
  const message = (id: string, blobPath: string | null) => queuedMessage(id, { blobPath });
  const recipient = (id: string, messageId: string) => queuedRecipient(id, messageId);

  test("stored with the message, a 10 MB one byte for byte; an older message still names its file", async () => {
    const big = randomBytes(10 * 1024 * 1024);
    await repo.insert(message("m-big", null), [recipient("r-big", "m-big")], [], { raw: big });
    await repo.insert(message("m-old", "messages/m-/m-old.eml"), [recipient("r-old", "m-old")], []);
    expect((await repo.rawMessage("m-big"))!.equals(big)).toBe(true);
    expect(await repo.rawMessage("m-old")).toBeNull();
    const claimed = await repo.claimDue("w1", 1, 1000, 10, []);
    expect(Object.fromEntries(claimed.map((c) => [c.message.id, c.message.blobPath]))).toEqual({ "m-big": null, "m-old": "messages/m-/m-old.eml" });
  });

  test("a message whose rows fail is not stored at all, raw bytes included", async () => {
    // Same recipient ID twice: the second insert fails as a whole.
    await expect(repo.insert(message("m-dup", null), [recipient("r-big", "m-dup")], [], { raw: Buffer.from("x") })).rejects.toThrow();
    expect(await repo.rawMessage("m-dup")).toBeNull();
    expect(await repo.getMessageById("m-dup")).toBeNull();
  });
});
