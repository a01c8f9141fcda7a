// (beyond) Posts kept messages again (addresses with on_target_failure = "queue"): every
// node runs it each second; a message is claimed with a lease (inbound-queue.port.ts), so
// one node posts it, and read back from the store only then, one at a time: mail waiting
// for its target costs disk, not memory. The POST is the one the transaction made: the same
// trace lines, envelope and X-Postroom-Message-Id, the address's target and format as they
// are now. Its statuses follow: delivered, rejected (a 4xx: the sender was told 250 and is
// not told again), queued with the next attempt, or expired after inbound.max_queue_time.
import type { Logger } from "../../lib/logger.ts";
import type { AddressRepo } from "../addresses/addresses.port.ts";
import type { CustomDomainRepo } from "../addresses/custom-domains.port.ts";
import { withTraceHeaders } from "../parse/trace-headers.ts";
import type { StatusChange } from "../statuses/incoming-status.ts";
import type { StatusRepo } from "../statuses/statuses.port.ts";
import { postToAddress } from "../targets/address-post.ts";
import { verdictFor } from "../targets/target-reply.ts";
import type { PostDeps } from "../transaction.ts";
import type { QueuedEntry } from "./inbound-queue.port.ts";
import type { QueueSettings } from "./keep-for-later.ts";
import { nextAttemptAt, retryResult } from "./queue-decisions.ts";

export interface QueueWorkerDeps {
  queue: QueueSettings;
  addresses: Pick<AddressRepo, "get">;
  customDomains: Pick<CustomDomainRepo, "findLiveByDomain">;
  statuses: Pick<StatusRepo, "update">;
  post: PostDeps;
  /** This node (cluster.node_id): the lease holder. */
  holder: string;
  /** Longer than one POST can take (the target's timeout, the stores' uploads). */
  leaseMs: number;
  logger: Logger;
  /** The appliance is stopping: messages claimed but not yet posted are let go at once, for the next start or another node. */
  stopping?: () => boolean;
}

/** Messages claimed per round; each is read and posted in turn. */
export const CLAIM_BATCH = 16;

/** One round: posts every kept message due now that this node could claim; how many it posted. */
export async function postDueMessages(deps: QueueWorkerDeps): Promise<number> {
  const nowMs = deps.post.clock.nowMs();
  const due = await deps.queue.repo.claimDue(deps.holder, nowMs, deps.leaseMs, CLAIM_BATCH);
  for (const entry of due) {
    if (deps.stopping?.()) {
      await deps.queue.repo.reschedule(entry.id, deps.holder, entry.attempts, entry.nextAttemptAtMs, entry.lastResponse).catch(() => {});
      continue;
    }
    try {
      await postOne(entry, deps);
    } catch (err) {
      // Unexpected (the store went away): let go of it, it is tried again at the next delay.
      deps.logger.error("kept inbound message could not be posted again", { err, queue_id: entry.id, address_id: entry.addressId });
      const nextMs = deps.post.clock.nowMs() + deps.queue.retryDelaysMs[0]!;
      await deps.queue.repo.reschedule(entry.id, deps.holder, entry.attempts, nextMs, entry.lastResponse).catch(() => {});
    }
  }
  return due.length;
}

async function postOne(entry: QueuedEntry, deps: QueueWorkerDeps): Promise<void> {
  const log = deps.logger.child({ queue_id: entry.id, address_id: entry.addressId, x_postroom_message_id: entry.facts.postroomMessageId });
  const settle = async (change: StatusChange, msg: string) => {
    if (!(await deps.queue.repo.finish(entry.id, deps.holder))) return log.warn("kept message's lease was lost; another node has it");
    await deps.statuses.update(entry.accountId, entry.statusIds, change);
    log[change.state === "delivered" ? "info" : "warn"](msg, { state: change.state, attempts: change.attempts, status: change.status });
  };
  const address = await deps.addresses.get(entry.accountId, entry.addressId);
  if (!address) {
    const response = "the address was deleted while its mail waited";
    return settle(
      { status: "rejected", statusCategory: "rejected", response, state: "expired", attempts: entry.attempts, nextAttemptAtMs: null },
      response,
    );
  }
  const bytes = await deps.queue.repo.message(entry.id);
  if (!bytes) return;
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { facts } = entry;
  const traced = withTraceHeaders(raw, facts.trace);
  const extracted = await deps.post.extract(traced, deps.post.limits, Buffer.byteLength(facts.trace));
  const customDomain = facts.customDomain ? await deps.customDomains.findLiveByDomain(facts.customDomain) : null;
  const group = { address, customDomain: customDomain?.addressId === address.id ? customDomain : null, rcpts: facts.rcpts };
  const outcome = await postToAddress(group, extracted.content, facts.envelope, facts.postroomMessageId, raw, deps.post, log);
  const verdict = verdictFor(outcome);
  const attempts = entry.attempts + 1;
  const response = verdict.response ?? (verdict.category === "successful" ? null : `${verdict.reply.code} ${verdict.reply.text}`);
  const result = retryResult(outcome);
  const base = { status: verdict.status, statusCategory: verdict.category, response, attempts, nextAttemptAtMs: null };
  if (result === "delivered") return settle({ ...base, state: "delivered" }, "kept inbound message posted to its target");
  if (result === "rejected") return settle({ ...base, state: "rejected" }, "kept inbound message refused by its target (4xx); dropped");
  const nowMs = deps.post.clock.nowMs();
  const nextMs = nextAttemptAt(attempts, entry.createdAtMs, nowMs, deps.queue.retryDelaysMs, deps.queue.maxQueueTimeMs);
  if (nextMs === null)
    return settle({ ...base, state: "expired" }, "kept inbound message expired: its target failed until inbound.max_queue_time");
  if (!(await deps.queue.repo.reschedule(entry.id, deps.holder, attempts, nextMs, response)))
    return log.warn("kept message's lease was lost; another node has it");
  await deps.statuses.update(entry.accountId, entry.statusIds, { ...base, state: "queued", nextAttemptAtMs: nextMs });
  log.info("kept inbound message's target failed again; posted again later", {
    attempts,
    next_attempt_at_ms: nextMs,
    status: verdict.status,
  });
}
