// Two nodes claim from one PostgreSQL outbox at once (two SQL clients, as two processes
// would have): several outbound accounts, many messages each with several events recorded
// interleaved, small batches, some POSTs failed and retried. Every event is claimed fresh
// once and acknowledged once, no message ever has events in two leased batches at the same
// moment, and each message's events are acknowledged in the order they were recorded.
import { SQL } from "bun";
import { afterAll, beforeAll, expect } from "bun:test";
import { createEventRepo } from "../../src/events/events.repo.ts";
import type { MessageEvent, NewEvent } from "../../src/events/message-event.ts";
import { createPgOutboxRepo } from "../../src/events/outbox.pg.repo.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { addMessage } from "./outbox-rows.ts";

const PG = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 600_000;
const ACCOUNTS = 4;
const MESSAGES_PER_ACCOUNT = 6;
const KINDS: NewEvent["kind"][] = ["registration", "dispatch", "delivery", "open"];
const BATCH_EVENTS = 5;

let handle: EngineHandle;
beforeAll(async () => {
  if (PG.available()) handle = await PG.open();
});
afterAll(async () => handle?.close());

PG.test(
  "two nodes claiming at once: each event once, one leased batch per message at a time, each message in order",
  async () => {
    if (handle.kind !== "postgres") throw new Error("PostgreSQL expected");
    const { url } = handle;
    const events = createEventRepo(handle.db);
    const recorded: MessageEvent[] = [];
    for (let a = 0; a < ACCOUNTS; a++) {
      const messages = Array.from({ length: MESSAGES_PER_ACCOUNT }, (_, m) => `m${a}-${m}`);
      for (const id of messages)
        await addMessage(handle, {
          id,
          accountId: "acct",
          outboundAccountId: `o${a}`,
          recipients: [{ id: `r-${id}`, email: `${id}@x.test` }],
        });
      // Kind by kind over the messages, so a batch holds events of several messages.
      for (const kind of KINDS)
        recorded.push(
          ...(await events.record(
            messages.map((id) => ({ messageId: id, recipientId: `r-${id}`, kind, details: {}, createdAtMs: NOW_MS - 1000 })),
          )),
        );
    }

    const leasedBy = new Map<string, string>();
    const violations: string[] = [];
    const freshClaims: string[] = [];
    const acknowledged: MessageEvent["id"][] = [];
    let failed = 0;

    const node = async (name: string): Promise<void> => {
      const sql = new SQL(url, { max: 2 });
      const outbox = createPgOutboxRepo(sql);
      try {
        while ((await outbox.countPending()) > 0) {
          for (const target of await outbox.pendingTargets()) {
            const batch = await outbox.claimBatch(target.target, NOW_MS, BATCH_EVENTS, LEASE_MS);
            if (!batch) continue;
            const messages = new Set(batch.events.map((e) => e.messageId));
            for (const m of messages) {
              const holder = leasedBy.get(m);
              if (holder) violations.push(`${name} leased ${m} while ${holder} held it`);
              leasedBy.set(m, name);
            }
            if (batch.attempts === 0) freshClaims.push(...batch.events.map((e) => e.id));
            await Bun.sleep(1); // the POST: the other node claims meanwhile
            // Released here, before the finish commits: until then the store still holds the lease.
            for (const m of messages) leasedBy.delete(m);
            if (batch.attempts === 0 && ++failed % 3 === 0) {
              expect(await outbox.finishRetry(batch.lease, NOW_MS)).toBe(true);
            } else {
              expect(await outbox.finishSent(batch.lease)).toBe(true);
              acknowledged.push(...batch.events.map((e) => e.id));
            }
          }
        }
      } finally {
        await sql.close();
      }
    };
    await Promise.all([node("node-1"), node("node-2")]);

    expect(violations).toEqual([]);
    const all = recorded.map((e) => e.id).sort();
    expect([...freshClaims].sort()).toEqual(all);
    expect([...acknowledged].sort()).toEqual(all);
    const position = new Map(acknowledged.map((id, i) => [id, i]));
    for (let a = 0; a < ACCOUNTS; a++) {
      for (let m = 0; m < MESSAGES_PER_ACCOUNT; m++) {
        const ofMessage = recorded.filter((e) => e.messageId === `m${a}-${m}`);
        const inAckOrder = [...ofMessage].sort((x, y) => position.get(x.id)! - position.get(y.id)!);
        expect(inAckOrder.map((e) => e.kind)).toEqual(KINDS);
      }
    }
  },
  60_000,
);
