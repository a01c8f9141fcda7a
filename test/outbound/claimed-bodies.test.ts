// src/outbound/queue/claimed-bodies.ts and the PostgreSQL claim that fills it (issue 38):
// a claim brings each claimed message's body (up to CLAIMED_BODY_MAX_BYTES) in its one
// round trip, and rawMessage gives it without reading the database again, once; a larger
// body is read when asked, as before; the bodies kept are bounded, the oldest dropped.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { CLAIMED_BODY_MAX_BYTES, ClaimedBodies } from "../../src/outbound/queue/claimed-bodies.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { LEASE_MS, NOW, type OpenedQueue, openQueue, QUEUE_TABLES } from "./queue-engines.ts";

test("the bodies kept are bounded, the oldest dropped first, and each is given once", () => {
  const bodies = new ClaimedBodies(2);
  bodies.keep("m1", Buffer.from("one"));
  bodies.keep("m2", Buffer.from("two"));
  bodies.keep("m3", Buffer.from("three"));
  expect(bodies.size).toBe(2);
  expect(bodies.take("m1")).toBeUndefined();
  expect(bodies.take("m3")?.toString()).toBe("three");
  expect(bodies.take("m3")).toBeUndefined();
  expect(bodies.take("m2")?.toString()).toBe("two");
  expect(bodies.size).toBe(0);
});

const pg = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;

describe("a PostgreSQL claim brings the bodies", () => {
  let opened: OpenedQueue | undefined;
  beforeAll(async () => {
    if (pg.available()) opened = await openQueue(pg);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(QUEUE_TABLES);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  const insert = (id: string, raw: Buffer, recipients: string[]) =>
    opened!.repo.insert(
      queuedMessage(id, { createdAtMs: NOW }),
      recipients.map((r, position) => queuedRecipient(r, id, { position, nextAttemptAtMs: NOW })),
      [],
      { raw, webhook: false },
    );

  pg.test("a claimed message's body comes with the claim, once; a larger one is read when asked", async () => {
    const small = Buffer.from([0, 1, 2, 255, 13, 10]);
    const large = Buffer.alloc(CLAIMED_BODY_MAX_BYTES + 1, 120);
    await insert("m-small", small, ["r1", "r2"]);
    await insert("m-large", large, ["r3"]);
    const claimed = await opened!.repo.claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    expect(claimed.map((c) => c.recipient.id).sort()).toEqual(["r1", "r2", "r3"]);
    // The bodies' rows gone, what the claim brought is all rawMessage can give.
    await opened!.handle.sql!`DELETE FROM outbound_message_bodies`;
    expect(await opened!.repo.rawMessage("m-small")).toStrictEqual(small);
    // Given once (two recipients of one message bring it once): a second ask reads the database.
    expect(await opened!.repo.rawMessage("m-small")).toBeNull();
    expect(await opened!.repo.rawMessage("m-large")).toBeNull();
  });
});
