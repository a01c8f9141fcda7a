// The record of a delivery attempt: its outcome (delivered, deferred, bounced...) with
// its events, committed with the queue's new state for the recipient, logged as an
// "outbound attempt" line, and told to /metrics once committed. Only while this worker
// still holds the recipient's lease: one whose lease ran out (it hung, or lost the store
// for longer than outbound.lease_time, so its heartbeat could not renew the lease) may have had the recipient taken by another node,
// so its outcome is dropped and the recipient is attempted again (at-least-once delivery).
import type { NewEvent } from "../../events/message-event.ts";
import { webhookConfigured } from "../queue/webhook-configured.ts";
import { attemptOutcome, throttledOutcome, UnsendableMessage, unpreparedOutcome } from "./outcome.ts";
import type { TransactionResult } from "./smtp-client.ts";
import type { Config } from "../../config/config.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import type { OutboundRepo } from "../queue/queue.port.ts";
import type { ClaimedRecipient, RecipientUpdate } from "../queue/message.ts";

export interface RecorderDeps {
  repo: OutboundRepo;
  config(): Config;
  clock: Clock;
  logger: Logger;
  /** An attempt's outcome, once committed, and the message's acceptance time (/metrics). */
  recorded?(update: RecipientUpdate, acceptedAtMs: number): void;
  /** An attempt's outcome dropped because the lease had ended (/metrics). */
  leaseLost?(): void;
}

export class AttemptRecorder {
  /** `workerId`: the holder of the leases whose outcomes this records. */
  constructor(
    private readonly deps: RecorderDeps,
    private readonly workerId: string,
    /** Told of each recipient whose outcome is about to be recorded (the worker stops renewing its lease). */
    private readonly finishing: (recipientId: string) => void = () => {},
  ) {}

  /** Records an `error` event for a copy that could not be made; retried unless the message itself is at fault. */
  unprepared(item: ClaimedRecipient, err: unknown): Promise<void> {
    const permanent = err instanceof UnsendableMessage;
    // Our own failure: its details go to the log; the account sees a sentence without internals.
    const reason = permanent
      ? (err as Error).message
      : "the message could not be prepared for delivery (DKIM signing or tracking failed on our side)";
    this.deps.logger.error("outbound copy could not be prepared", {
      message_id: item.message.id,
      to: item.recipient.email,
      recipient_id: item.recipient.id,
      permanent,
      err,
    });
    const c = this.deps.config().outbound;
    const o = unpreparedOutcome({
      item,
      reason,
      permanent,
      nowMs: this.deps.clock.nowMs(),
      retryDelaysMs: c.retryDelaysMs,
      maxQueueTimeMs: c.maxQueueTimeMs,
    });
    const webhook = webhookConfigured(this.deps.config().accounts, item.message.outboundAccountId);
    return this.finish(item, o.update, o.events, webhook);
  }

  event(item: ClaimedRecipient, kind: NewEvent["kind"], details: Record<string, unknown>): NewEvent {
    return { messageId: item.message.id, recipientId: item.recipient.id, kind, details, createdAtMs: this.deps.clock.nowMs() };
  }

  /**
   * Records the outcome of one attempt (or of a decision made without one). `dispatch`, the
   * event of the attempt's start, is recorded with it in the same commit: were the process
   * to die before that commit, the recipient is still queued and the attempt is made again.
   */
  settle(
    item: ClaimedRecipient,
    result: TransactionResult,
    mx: string | null,
    permanentWithoutReply: boolean,
    dispatch: NewEvent | null = null,
    sourceIp: string | null = null,
  ): Promise<void> {
    const c = this.deps.config().outbound;
    const o = attemptOutcome({
      item,
      result,
      mx,
      permanentWithoutReply,
      sourceIp,
      nowMs: this.deps.clock.nowMs(),
      retryDelaysMs: c.retryDelaysMs,
      maxQueueTimeMs: c.maxQueueTimeMs,
      suppressionTtlMs: c.suppressionTtlMs,
    });
    const r = item.recipient;
    const m = item.message;
    this.deps.logger.info("outbound attempt", {
      message_id: m.id,
      message_id_header: m.messageId,
      from: m.from,
      to: r.email,
      recipient_id: r.id,
      outbound_account_id: m.outboundAccountId,
      domain: r.domain,
      mx,
      ...(sourceIp ? { source_ip: sourceIp } : {}),
      verdict: o.verdict,
      bounce_class: o.events.at(-1)?.details.bounce_class,
      smtp_code: result.code,
      reply: result.response,
      attempt: o.update.attempts,
    });
    const webhook = webhookConfigured(this.deps.config().accounts, item.message.outboundAccountId);
    return this.finish(item, o.update, dispatch ? [dispatch, ...o.events] : o.events, webhook);
  }

  /** Records a throttle reply (outcome.ts, throttledOutcome): a deferral that does not count against the recipient. */
  throttled(
    item: ClaimedRecipient,
    result: TransactionResult,
    mx: string | null,
    destination: string,
    dispatch: NewEvent | null,
  ): Promise<void> {
    const o = throttledOutcome({
      item,
      result,
      mx,
      nowMs: this.deps.clock.nowMs(),
      maxQueueTimeMs: this.deps.config().outbound.maxQueueTimeMs,
    });
    this.deps.logger.info("outbound attempt", {
      message_id: item.message.id,
      to: item.recipient.email,
      recipient_id: item.recipient.id,
      outbound_account_id: item.message.outboundAccountId,
      domain: item.recipient.domain,
      destination,
      mx,
      verdict: "throttled",
      smtp_code: result.code,
      reply: result.response,
      attempt: item.recipient.attempts + 1,
    });
    const webhook = webhookConfigured(this.deps.config().accounts, item.message.outboundAccountId);
    return this.finish(item, o.update, dispatch ? [dispatch, ...o.events] : o.events, webhook);
  }

  /** Commits the outcome if the lease is still ours; else writes nothing, and says so. */
  private async finish(item: ClaimedRecipient, update: RecipientUpdate, events: NewEvent[], webhook: boolean): Promise<void> {
    this.finishing(item.recipient.id);
    const recorded = await this.deps.repo.finishAttempt(this.workerId, item.recipient.id, update, events, this.deps.clock.nowMs(), {
      webhook,
    });
    if (recorded === null) {
      this.deps.logger.warn("lease lost: the outcome is dropped; the recipient is attempted again", {
        message_id: item.message.id,
        recipient_id: item.recipient.id,
        to: item.recipient.email,
        worker: this.workerId,
        dropped_status: update.status,
      });
      this.deps.leaseLost?.();
      return;
    }
    this.deps.recorded?.(update, item.message.createdAtMs);
  }
}
