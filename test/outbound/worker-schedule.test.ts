// When the delivery worker claims: a burst of kicks is one claim, and recipients that are
// due but leased (in flight) do not make it claim again and again until they finish.
import { afterEach, describe, expect, test } from "bun:test";
import { silentLogger } from "../../src/lib/logger.ts";
import type { OutboundRepo } from "../../src/outbound/outbound.repo.ts";
import { DeliveryWorker, KICK_DELAY_MS } from "../../src/outbound/worker.ts";

const NOW = 1_000_000;

function workerWith(nextDueMs: number | null) {
  const claims: number[] = [];
  const repo = {
    releaseHeldBy: async () => 0,
    release: async () => {},
    claimDue: async () => {
      claims.push(performance.now());
      return [];
    },
    nextDueMs: async () => nextDueMs,
    flush: async () => {},
  } as unknown as OutboundRepo;
  const config = { outbound: { concurrency: 20, domainConcurrency: 5, leaseTimeMs: 60_000 } };
  const worker = new DeliveryWorker({
    repo,
    prepare: async (_m, _id, _to, raw) => raw,
    samePerRecipient: () => true,
    blobs: {} as never,
    resolver: {} as never,
    clock: { nowMs: () => NOW },
    logger: silentLogger,
    config: () => config as never,
  });
  return { worker, claims };
}

let running: DeliveryWorker | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});

describe("DeliveryWorker scheduling", () => {
  test("kicks within the delay are one claim", async () => {
    const { worker, claims } = workerWith(null);
    running = worker;
    await worker.start();
    await Bun.sleep(20);
    claims.length = 0;
    // Three enqueues a timer turn apart (each would have been a claim of its own).
    for (let i = 0; i < 3; i++) {
      worker.kick();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await Bun.sleep(KICK_DELAY_MS + 40);
    expect(claims.length).toBeLessThan(3);
  });

  test("recipients due but leased do not make the worker claim in a loop", async () => {
    // Due a second ago, yet nothing can be claimed: they are in flight on this worker.
    const { worker, claims } = workerWith(NOW - 1000);
    running = worker;
    await worker.start();
    await Bun.sleep(200);
    expect(claims.length).toBeLessThanOrEqual(2);
  });
});
