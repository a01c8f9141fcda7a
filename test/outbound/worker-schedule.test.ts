// When the delivery worker claims: a burst of kicks is one claim, and recipients that are
// due but leased (in flight) do not make it claim again and again until they finish. The
// worker's timers run on Bun's fake timers: each step moves the time by hand, so what is
// counted does not depend on how busy the machine is.
import { afterEach, describe, expect, jest, test } from "bun:test";
import { silentLogger } from "../../src/lib/logger.ts";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { DeliveryWorker, KICK_DELAY_MS } from "../../src/outbound/delivery/worker.ts";

const NOW = 1_000_000;

function workerWith(nextDueMs: number | null) {
  /** When each claim was made (fake time). */
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
  const config = { outbound: { concurrency: 20, domainConcurrency: 5, initialDomainConcurrency: 5, leaseTimeMs: 60_000 } };
  const worker = new DeliveryWorker({
    repo,
    prepare: async (_m, _id, _to, raw) => raw,
    samePerRecipient: () => true,
    resolver: {} as never,
    clock: { nowMs: () => NOW },
    logger: silentLogger,
    config: () => config as never,
    nodeId: "node-1",
  });
  return { worker, claims };
}

/** Moves the fake clock by `ms`, firing the timers due, and lets the worker's async steps after each finish. */
async function advance(ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    jest.advanceTimersByTime(1);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let running: DeliveryWorker | null = null;
afterEach(async () => {
  jest.useRealTimers();
  await running?.stop();
  running = null;
});

describe("DeliveryWorker scheduling", () => {
  test("kicks within the delay are one claim, made the delay after the first", async () => {
    jest.useFakeTimers();
    const { worker, claims } = workerWith(null);
    running = worker;
    await worker.start();
    await advance(1);
    // The claim at start; nothing due, so the worker sleeps until its idle poll.
    expect(claims).toHaveLength(1);
    // Three enqueues a millisecond apart: each would be a claim of its own without the delay.
    const firstKickMs = performance.now();
    for (let i = 0; i < 3; i++) {
      worker.kick();
      await advance(1);
    }
    expect(claims).toHaveLength(1);
    await advance(20);
    expect(claims.slice(1)).toEqual([firstKickMs + KICK_DELAY_MS]);
  });

  test("recipients due but leased do not make the worker claim in a loop: it polls once a second", async () => {
    jest.useFakeTimers();
    // Due a second ago, yet nothing can be claimed: they are in flight on this worker.
    const { worker, claims } = workerWith(NOW - 1000);
    running = worker;
    await worker.start();
    await advance(2500);
    // The claim at start, then one a second.
    expect(claims.map((ms) => ms - claims[0]!)).toEqual([0, 1000, 2000]);
  });
});
