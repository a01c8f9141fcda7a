// One chunk of a delivery: the recipients the worker (worker.ts) claimed for one
// destination, delivered over one connection (a kept one, else a new one; a kept one that
// died is replaced once), each message's copy held in the memory budget until its last
// recipient of the chunk had its attempt, every outcome recorded, the connection kept
// for the next chunk if it went well. Apart from the worker's scheduling loop (claims,
// wake-ups, concurrency), which starts one of these per free connection.
import type { IpPoolConfig } from "../../config/config.ts";
import type { AttemptDetails } from "../../events/kinds.ts";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../../lib/gc-pacer.ts";
import { costOf, type Reservation } from "../../lib/memory-budget.ts";
import type { ClaimedRecipient } from "../queue/message.ts";
import type { AttemptRecorder } from "./attempt-recorder.ts";
import { connectTo } from "./connect.ts";
import { type ConnectionCache, destinationKey } from "./connection-cache.ts";
import type { DestinationTls } from "./destination-tls.ts";
import type { DestinationWindows } from "./destination-window.ts";
import type { HeldRecipients } from "./held-recipients.ts";
import { copyFor, envelopeSender } from "./prepare.ts";
import type { SmtpClient } from "./smtp-client.ts";
import { poolOf, rankSourceAddresses } from "./source-address.ts";
import { capsSpent, withinWarmup } from "./warmup-gate.ts";
import type { TlsSessionCache } from "./tls-sessions.ts";
import { DELIVERY_MESSAGE_COST, type WorkerDeps } from "./worker-deps.ts";

/** What a chunk uses of its worker: its deps and id, and what it shares across chunks. */
export interface ChunkContext {
  deps: WorkerDeps;
  /** The worker's id, the holder of its leases. */
  workerId: string;
  /** Idle connections to destinations we just delivered to; at most one per delivery slot. */
  connections: ConnectionCache<SmtpClient>;
  /** Remote servers' TLS sessions, resumed by the next connection to the same server. */
  tlsSessions: TlsSessionCache;
  /** Records each attempt's outcome with its events, and logs it. */
  record: AttemptRecorder;
  /** The recipients the worker holds, renewed by a heartbeat while their attempts run. */
  held: HeldRecipients;
  /** Each destination's window (slow start), told what each transaction came to. */
  destinations: DestinationWindows;
  /** The worker is stopping: the connection is closed, not kept. */
  stopping(): boolean;
  /** The memory budget had no room for the next message: the worker claims nothing for a while. */
  memoryFull(): void;
}

/**
 * Delivers `items`, telling the destination's window what each transaction came to: over
 * one connection per sending pool among them (the recipients of outbound accounts with
 * different ip_pools leave from different addresses), one pool after the other.
 */
export async function deliverChunk(ctx: ChunkContext, domain: string, destination: string, items: ClaimedRecipient[]): Promise<void> {
  const config = ctx.deps.config();
  const byPool = new Map<string, { pool: IpPoolConfig | null; items: ClaimedRecipient[] }>();
  for (const item of items) {
    const pool = poolOf(config, item.message.outboundAccountId);
    const group = byPool.get(pool?.name ?? "");
    if (group) group.items.push(item);
    else byPool.set(pool?.name ?? "", { pool, items: [item] });
  }
  for (const group of byPool.values()) await deliverFrom(ctx, domain, destination, group.pool, group.items);
}

/** Delivers `items` over one connection from `pool` (null: the system's default address). */
async function deliverFrom(
  ctx: ChunkContext,
  domain: string,
  destination: string,
  pool: IpPoolConfig | null,
  claimed: ClaimedRecipient[],
): Promise<void> {
  const config = ctx.deps.config();
  const tls: DestinationTls = ctx.deps.tlsFor ? await ctx.deps.tlsFor(domain) : { requirement: { level: "opportunistic" } };
  // The destination key that spreads a pool's destinations over its addresses: the
  // recipient domain here (one parameter, so a destination's name can take its place).
  const sources = pool ? rankSourceAddresses(pool.addresses, domain) : null;
  // A kept connection left from some address: only mail that would leave from it may take it.
  const key = `${destinationKey(domain, config.outbound.smarthost, tls.requirement.level)}${sources ? ` from=${sources.map((a) => a.ip).join(",")}` : ""}`;
  const connect = () => connectTo(domain, config, ctx.deps.resolver, tls.requirement, tls.ca, ctx.tlsSessions, sources);
  // A connection left open by the last delivery to this destination, else a new one.
  let client = ctx.connections.take(key);
  let reused = client !== null;
  if (!client) {
    if (await capsSpent(ctx, sources, domain, claimed)) return;
    const opened = await connect();
    if (!opened.ok) {
      await Promise.all(claimed.map((item) => ctx.record.settle(item, { code: null, response: opened.reason }, null, opened.permanent)));
      // A null MX or a policy refusal is no sign of load.
      if (!opened.permanent) ctx.destinations.feedback(destination, "failed");
      return;
    }
    client = opened.client;
  }
  // Past the warm-up cap of the address it leaves from, the rest wait for the next day.
  const items = await withinWarmup(ctx, sources, client.sourceIp, domain, claimed);
  if (items.length === 0) return ctx.connections.put(key, client);
  const pending = new Set(items);
  const blobs = new Map<string, Buffer>();
  // Each message's copy is held (and counted in the memory budget) until its last
  // recipient of this chunk has had its attempt.
  const left = new Map<string, number>();
  for (const item of items) left.set(item.message.id, (left.get(item.message.id) ?? 0) + 1);
  const held = new Map<string, Reservation>();
  const done = (item: ClaimedRecipient) => {
    const n = (left.get(item.message.id) ?? 1) - 1;
    left.set(item.message.id, n);
    if (n > 0) return;
    // Its stored bytes, the signing thread's copy and the SMTP client's slices are garbage now.
    if (item.message.sizeBytes > LARGE_MESSAGE_BYTES) garbageMade(2 * item.message.sizeBytes);
    blobs.delete(item.message.id);
    held.get(item.message.id)?.release();
    held.delete(item.message.id);
  };
  // Outcomes commit in groups while the next message goes out; the chunk ends once all have.
  const recorded: Promise<void>[] = [];
  try {
    for (const item of items) {
      pending.delete(item);
      if (!ctx.held.holds(item.recipient.id, ctx.deps.clock.nowMs())) {
        // The heartbeat found the lease lost (this node stalled, or lost the store): its new holder attempts it.
        ctx.deps.logger.warn("lease lost before the attempt: left to the worker holding it", {
          message_id: item.message.id,
          recipient_id: item.recipient.id,
          worker: ctx.workerId,
        });
        done(item);
        continue;
      }
      if (!client.usable) {
        recorded.push(
          ctx.record.settle(
            item,
            { code: null, response: "connection to the mail server was lost" },
            client.endpoint.host,
            false,
            null,
            client.sourceIp,
          ),
        );
        continue;
      }
      if (ctx.deps.budget && !held.has(item.message.id)) {
        const reservation = ctx.deps.budget.reserve(costOf(DELIVERY_MESSAGE_COST, item.message.sizeBytes), null);
        if (!reservation) {
          // No room in memory now: this recipient and the rest of the chunk wait, unattempted.
          ctx.memoryFull();
          const waiting = [item, ...pending].map((i) => i.recipient.id);
          pending.clear();
          ctx.held.drop(waiting);
          recorded.push(ctx.deps.repo.release(waiting, ctx.workerId));
          break;
        }
        held.set(item.message.id, reservation);
      }
      const attempt = item.recipient.attempts + 1;
      const dispatch = ctx.record.event(item, "dispatch", {
        mx: client.endpoint.host,
        smtp_code: null,
        smtp_response: null,
        attempt,
        ...(client.sourceIp ? { source_ip: client.sourceIp } : {}),
      } satisfies AttemptDetails);
      let raw: Buffer;
      try {
        raw = await copyFor(item, blobs, ctx.deps);
      } catch (err) {
        // Nothing was sent: the attempt could not even be made. E13 and the webhook say why.
        recorded.push(ctx.record.unprepared(item, err));
        done(item);
        continue;
      }
      let result = await client.send(envelopeSender(item.message, item.recipient.id), item.recipient.email, raw);
      if (result.code === null && reused) {
        // The kept connection died as it was used again (the server dropped it while it
        // waited): that says nothing about this message, so a fresh connection takes it.
        client.close();
        const opened = await connect();
        if (!opened.ok) {
          for (const failed of [item, ...pending])
            recorded.push(ctx.record.settle(failed, { code: null, response: opened.reason }, null, opened.permanent));
          pending.clear();
          if (!opened.permanent) ctx.destinations.feedback(destination, "failed");
          return;
        }
        client = opened.client;
        dispatch.details = { ...dispatch.details, mx: client.endpoint.host, ...(client.sourceIp ? { source_ip: client.sourceIp } : {}) };
        result = await client.send(envelopeSender(item.message, item.recipient.id), item.recipient.email, raw);
      }
      reused = false;
      // The session died or the server said it is closing (421): the destination is struggling.
      // Any other answer, a refusal included, is the destination taking its mail.
      ctx.destinations.feedback(destination, result.code === null || result.code === 421 ? "failed" : "carried");
      recorded.push(ctx.record.settle(item, result, client.endpoint.host, false, dispatch, client.sourceIp));
      done(item);
      if (result.code !== null && result.code >= 400) await client.reset();
    }
  } finally {
    for (const reservation of held.values()) reservation.release();
    // Kept for the next message to this destination only if every transaction on it went well.
    if (ctx.stopping()) client.close();
    else ctx.connections.put(key, client);
    for (const item of pending) recorded.push(ctx.record.settle(item, { code: null, response: "delivery was interrupted" }, null, false));
    for (const r of await Promise.allSettled(recorded)) {
      // Not recorded: the lease keeps the recipient until it ends, then it is tried again.
      if (r.status === "rejected") ctx.deps.logger.error("recording a delivery outcome failed", { err: r.reason, domain });
    }
  }
}
