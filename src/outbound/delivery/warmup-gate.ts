// Applies the warm-up caps (warmup.ts) to a chunk about to be delivered from a pool
// address: the recipients within the day's cap for the destination go, the rest wait for
// the next day (their lease given back with a new due time: no attempt counted, no event,
// no bounce). Before connecting, a chunk whose every usable address has spent its cap
// waits without opening a connection.
import { isIPv6 } from "node:net";
import type { SourceAddress } from "../../config/config.ts";
import { isoTime } from "../../lib/clock.ts";
import type { ClaimedRecipient } from "../queue/message.ts";
import type { HeldRecipients } from "./held-recipients.ts";
import { dayStartMs, nextDayStartMs, warmupCap } from "./warmup.ts";
import type { WorkerDeps } from "./worker-deps.ts";

/** What the gate uses of a chunk's context (deliver-chunk.ts's ChunkContext has it). */
export interface GateContext {
  deps: Pick<WorkerDeps, "warmup" | "clock" | "repo" | "logger">;
  /** The worker's id, the holder of the leases given back. */
  workerId: string;
  held: Pick<HeldRecipients, "drop">;
}

/** The addresses a chunk can leave from: the preferred one of each family in the pool. */
const usable = (ranked: readonly SourceAddress[]): SourceAddress[] =>
  [false, true].flatMap((v6) => ranked.find((a) => isIPv6(a.ip) === v6) ?? []);

/** Gives the recipients back until the next day opens, and says so in the log (once per chunk). */
async function waitForNextDay(
  ctx: GateContext,
  items: readonly ClaimedRecipient[],
  why: { source_ip: string; destination: string; cap: number },
): Promise<void> {
  if (items.length === 0) return;
  const now = ctx.deps.clock.nowMs();
  const ids = items.map((i) => i.recipient.id);
  ctx.held.drop(ids);
  await ctx.deps.repo.release(ids, ctx.workerId, nextDayStartMs(now));
  ctx.deps.logger.info("warm-up cap reached: recipients wait for the next day", {
    ...why,
    waiting: items.length,
    until: isoTime(nextDayStartMs(now)),
  });
}

/** True when every address the chunk could leave from has spent today's cap: the chunk waited, do not connect. */
export async function capsSpent(
  ctx: GateContext,
  ranked: readonly SourceAddress[] | null,
  destinationKey: string,
  items: readonly ClaimedRecipient[],
): Promise<boolean> {
  const counts = ctx.deps.warmup;
  if (!ranked || !counts) return false;
  const now = ctx.deps.clock.nowMs();
  let spent: { source_ip: string; destination: string; cap: number } | null = null;
  for (const address of usable(ranked)) {
    const cap = warmupCap(address.warmup, now);
    if (cap === null) return false;
    // A count that cannot be read here is left to withinWarmup, which takes it or waits.
    const sent = await counts.sent(address.ip, destinationKey, dayStartMs(now)).catch(() => 0);
    if (sent < cap) return false;
    spent ??= { source_ip: address.ip, destination: destinationKey, cap };
  }
  if (!spent) return false;
  await waitForNextDay(ctx, items, spent);
  return true;
}

/** The recipients that go now from `sourceIp`; the rest wait for the next day. */
export async function withinWarmup(
  ctx: GateContext,
  ranked: readonly SourceAddress[] | null,
  sourceIp: string | null,
  destinationKey: string,
  items: ClaimedRecipient[],
): Promise<ClaimedRecipient[]> {
  const address = ranked?.find((a) => a.ip === sourceIp);
  const counts = ctx.deps.warmup;
  if (!address?.warmup || !counts) return items;
  const now = ctx.deps.clock.nowMs();
  const cap = warmupCap(address.warmup, now);
  if (cap === null) return items;
  let granted = 0;
  try {
    granted = await counts.take(address.ip, destinationKey, dayStartMs(now), items.length, cap);
  } catch (err) {
    // The count could not be read: nothing goes past a cap it cannot see. The recipients
    // are given back as they are (due now) and taken up again by the next claim.
    ctx.deps.logger.error("warm-up count unavailable: recipients wait", { err, source_ip: address.ip, destination: destinationKey });
    const ids = items.map((i) => i.recipient.id);
    ctx.held.drop(ids);
    await ctx.deps.repo.release(ids, ctx.workerId);
    return [];
  }
  await waitForNextDay(ctx, items.slice(granted), { source_ip: address.ip, destination: destinationKey, cap });
  return items.slice(0, granted);
}
