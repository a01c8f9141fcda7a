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
import { type ConnectionCache, laneConnectionKey } from "./connection-cache.ts";
import type { DestinationTls } from "./destination-tls.ts";
import type { DestinationWindows } from "./destination-window.ts";
import type { HeldRecipients } from "./held-recipients.ts";
import { PendingOutcomes } from "./pending-outcomes.ts";
import { copyFor, envelopeSender, StoredCopyUnread } from "./prepare.ts";
import type { SmtpClient } from "./smtp-client.ts";
import { newConnectionSources } from "./source-address.ts";
import { capsSpent, withinWarmup } from "./warmup-gate.ts";
import type { TlsSessionCache } from "./tls-sessions.ts";
import { DELIVERY_MESSAGE_COST, type WorkerDeps } from "./worker-deps.ts";
import type { PauseBoard } from "../destinations/pause-board.ts";
import type { Pacer } from "../destinations/pacer.ts";
import { isThrottleReply, isThrottleText, type ResolvedDestination } from "../destinations/rules.ts";

/**
 * Where one chunk goes: its recipients' domain, the destination it resolved to, the pool it
 * leaves from (null: the system's default address), and the lane (destination and source
 * addresses) whose window and pace it counts against.
 */
export interface ChunkTarget {
  domain: string;
  resolved: ResolvedDestination;
  pool: IpPoolConfig | null;
  lane: string;
  /** The pool's addresses ("a,b"), or DEFAULT_SOURCE_IP: the lane's source part. */
  sourceIp: string;
}

const NONE_LISTED: ReadonlySet<string> = new Set();

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
  /** Paused destinations, shared by the nodes; told of each throttle reply. */
  pauses: PauseBoard;
  /** Each lane's `rate`, spread evenly. */
  pacer: Pacer;
}

/**
 * Delivers `items` (one pool's) over one connection from the pool's address the destination
 * prefers, telling the destination's window what each transaction came to.
 */
export async function deliverChunk(ctx: ChunkContext, target: ChunkTarget, claimed: ClaimedRecipient[]): Promise<void> {
  const { domain, lane: destination, resolved } = target;
  const config = ctx.deps.config();
  const tls: DestinationTls = ctx.deps.tlsFor ? await ctx.deps.tlsFor(domain) : { requirement: { level: "opportunistic" } };
  // The destination's name spreads a pool's destinations over its addresses (all of a
  // rule's domains leave from one address) and keys the warm-up counts.
  // A listed address opens no new connection while the pool has a clean one (outbound.avoid_listed_ips).
  const listed = ctx.deps.listedIps?.() ?? NONE_LISTED;
  const sources = target.pool ? newConnectionSources(target.pool.addresses, resolved.name, listed, config.outbound.avoidListedIps) : null;
  const connect = () => connectTo(domain, config, ctx.deps.resolver, tls.requirement, tls.ca, ctx.tlsSessions, sources);
  const sourceIps = sources ? sources.map((a) => a.ip) : null;
  const key = laneConnectionKey(destination, domain, config.outbound.smarthost, tls.requirement.level, sourceIps);
  // The metrics' source IP: the address a connection left from, once there is one.
  let sourceIp = target.sourceIp;
  const label = resolved.rule ? resolved.name : resolved.windowKey;
  /** Set when the destination throttled us or was paused meanwhile: the rest of the chunk keeps its place. */
  let stopped = false;
  const giveBack = (rest: ClaimedRecipient[]) => {
    const ids = rest.map((i) => i.recipient.id);
    ctx.held.drop(ids);
    return ctx.deps.repo.release(ids, ctx.workerId);
  };
  /** The destination asked us to slow down: all of it pauses, on every node. */
  const pauseFor = async (reply: string) => {
    ctx.destinations.feedback(destination, "failed");
    ctx.deps.destinationMetrics?.attempt(label, sourceIp, "deferral");
    const pause = await ctx.pauses.throttled(resolved.name, reply, resolved.rule!.pauseMs);
    if (pause) ctx.deps.logger.warn("destination throttled us: paused", { destination: resolved.name, reply, pause_ms: pause.pauseMs });
  };
  /** No connection, and the reason is a throttle (a 421 greeting): the recipients keep their place. */
  const throttledAtConnect = async (reason: string, rest: ClaimedRecipient[]) => {
    await pauseFor(reason);
    return Promise.all(rest.map((item) => ctx.record.throttled(item, { code: null, response: reason }, null, resolved.name, null)));
  };
  // A connection left open by the last delivery to this destination, else a new one.
  let client = ctx.connections.take(key);
  let reused = client !== null;
  if (!client) {
    // An idle connection of the lane this chunk cannot use (another domain's policy) would
    // stay open beside the new one: it is closed, so the lane's sessions stay within its window.
    if (await capsSpent(ctx, sources, resolved.name, claimed)) return;
    ctx.connections.closeOne((k) => k.startsWith(`${destination}|`));
    const opened = await connect();
    if (!opened.ok && !opened.permanent && isThrottleText(resolved.rule, opened.reason)) {
      await throttledAtConnect(opened.reason, claimed);
      return;
    }
    if (!opened.ok) {
      await Promise.all(claimed.map((item) => ctx.record.settle(item, { code: null, response: opened.reason }, null, opened.permanent)));
      // A null MX or a policy refusal is no sign of load.
      if (!opened.permanent) ctx.destinations.feedback(destination, "failed");
      return;
    }
    client = opened.client;
    ctx.deps.destinationMetrics?.connection(label, client.sourceIp ?? target.sourceIp);
  }
  sourceIp = client.sourceIp ?? target.sourceIp;
  // Past the warm-up cap of the address it leaves from, the rest wait for the next day.
  let items: ClaimedRecipient[];
  try {
    items = await withinWarmup(ctx, sources, client.sourceIp, resolved.name, claimed);
  } catch (err) {
    // The store failed the warm-up count (PostgreSQL away): the connection is kept for the
    // next chunk rather than left open and unowned; the recipients' leases run out as usual.
    ctx.connections.put(key, client);
    throw err;
  }
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
  const recorded = new PendingOutcomes();
  /** The chunk stops: `item` (unattempted) and the rest keep their place in the queue. */
  const keepPlace = (item: ClaimedRecipient, taken = true) => {
    stopped = true;
    if (taken) done(item);
    recorded.add(giveBack([item, ...pending]));
    pending.clear();
  };
  try {
    for (const item of items) {
      // Paused meanwhile (a throttle on another connection, another node, an operator): this one and the rest keep their place.
      if (ctx.pauses.pausedNow(resolved.name, ctx.deps.clock.nowMs())) {
        keepPlace(item, false);
        break;
      }
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
        recorded.add(
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
          recorded.add(ctx.deps.repo.release(waiting, ctx.workerId));
          break;
        }
        held.set(item.message.id, reservation);
      }
      const attempt = item.recipient.attempts + 1;
      const dispatch = ctx.record.event(item, "dispatch", {
        mx: client.endpoint.host,
        ...(client.sourceIp ? { source_ip: client.sourceIp } : {}),
        smtp_code: null,
        smtp_response: null,
        attempt,
      } satisfies AttemptDetails);
      let raw: Buffer;
      try {
        raw = await copyFor(item, blobs, ctx.deps);
      } catch (err) {
        if (err instanceof StoredCopyUnread) {
          // The store is away, not the message at fault: this one and the rest keep their place, said once.
          ctx.deps.logger.warn("messages to deliver could not be read; they keep their place", { err: err.cause, domain });
          keepPlace(item);
          break;
        }
        // Nothing was sent: the attempt could not even be made. E13 and the webhook say why.
        recorded.add(ctx.record.unprepared(item, err));
        done(item);
        continue;
      }
      // The lane's rate: the next slot, booked as the transaction starts. Too far off, this
      // one and the rest keep their place rather than hold the session idle.
      const wait = ctx.pacer.book(destination, resolved.rule?.rate ?? null, performance.now());
      if (wait === null) {
        keepPlace(item);
        break;
      }
      if (wait > 0) await Bun.sleep(wait);
      let result = await client.send(envelopeSender(item.message, item.recipient.id), item.recipient.email, raw);
      if (result.code === null && reused) {
        // The kept connection died as it was used again (the server dropped it while it
        // waited): that says nothing about this message, so a fresh connection takes it.
        client.close();
        const opened = await connect();
        if (!opened.ok && !opened.permanent && isThrottleText(resolved.rule, opened.reason)) {
          recorded.add(throttledAtConnect(opened.reason, [item, ...pending]));
          pending.clear();
          return;
        }
        if (!opened.ok) {
          for (const failed of [item, ...pending])
            recorded.add(ctx.record.settle(failed, { code: null, response: opened.reason }, null, opened.permanent));
          pending.clear();
          if (!opened.permanent) ctx.destinations.feedback(destination, "failed");
          return;
        }
        client = opened.client;
        sourceIp = client.sourceIp ?? target.sourceIp;
        dispatch.details = { ...dispatch.details, mx: client.endpoint.host, ...(client.sourceIp ? { source_ip: client.sourceIp } : {}) };
        result = await client.send(envelopeSender(item.message, item.recipient.id), item.recipient.email, raw);
      }
      reused = false;
      if (isThrottleReply(resolved.rule, result.code, result.response)) {
        // The destination asks us to slow down: all of it pauses (every node), and this
        // recipient and the rest of the chunk keep their place for when it resumes.
        await pauseFor(`${result.code} ${result.response}`);
        recorded.add(ctx.record.throttled(item, result, client.endpoint.host, resolved.name, dispatch));
        done(item);
        stopped = true;
        recorded.add(giveBack([...pending]));
        pending.clear();
        break;
      }
      // The session died or the server said it is closing (421): the destination is struggling.
      // Any other answer, a refusal included, is the destination taking its mail.
      ctx.destinations.feedback(destination, result.code === null || result.code === 421 ? "failed" : "carried");
      recorded.add(ctx.record.settle(item, result, client.endpoint.host, false, dispatch, client.sourceIp));
      if (result.code !== null && result.code < 300) ctx.deps.destinationMetrics?.attempt(label, sourceIp, "delivery");
      else if (result.code === null || result.code < 500) ctx.deps.destinationMetrics?.attempt(label, sourceIp, "deferral");
      done(item);
      if (result.code !== null && result.code >= 400) await client.reset();
    }
  } finally {
    for (const reservation of held.values()) reservation.release();
    // Kept for the next message to this destination only if every transaction on it went well.
    if (ctx.stopping() || stopped) client.close();
    else ctx.connections.put(key, client);
    for (const item of pending) recorded.add(ctx.record.settle(item, { code: null, response: "delivery was interrupted" }, null, false));
    const failures = await recorded.settled();
    // Not recorded: the lease keeps each recipient until it ends, then it is tried again.
    // One line per chunk, not per recipient: the store being away fails them all alike.
    if (failures.length > 0)
      ctx.deps.logger.error("recording a delivery outcome failed", { err: failures[0], domain, failed: failures.length });
  }
}
