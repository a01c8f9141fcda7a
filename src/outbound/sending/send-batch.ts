// POST /messages/batch (issue 34): many E11 bodies of one outbound account, each checked and
// composed as E11 does (send.ts), the valid ones stored in ONE transaction (with the batch's
// idempotency answer) before the answer. What E11 does per request and a batch does once:
// the commit (an fsync), the suppression lookup, the wake-up of the delivery worker, and the
// composition of messages with one content (shared-compose.ts).
import type { Logger } from "../../lib/logger.ts";
import type { Problem } from "../../lib/validation.ts";
import { InputProblem, type MessageBody } from "../compose/message-input.ts";
import { SharedComposer } from "../compose/shared-compose.ts";
import { enqueueMessages, queuedMessageOf } from "../queue/enqueue.ts";
import type { OutboundMessage } from "../queue/message.ts";
import type { QueuedMessage } from "../queue/queue.port.ts";
import type { KeyAnswer } from "./idempotency.ts";
import { apiRequestOf, enqueueDeps, logQueued, type SendDeps, type Sender } from "./send.ts";

/** One message of a batch: queued, refused (422, why), or not taken (another status: the rate limit). */
export type BatchOutcome =
  | { kind: "queued"; message: OutboundMessage }
  | { kind: "refused"; problem: Problem }
  | { kind: "skipped"; status: number; error: string };

/** What the caller decided before the messages are composed: a refusal per message, or null to send it. */
export type BatchItem = { body: MessageBody } | { outcome: BatchOutcome };

/**
 * Composes and queues a batch's messages; resolves, once every valid one is on disk, with one
 * outcome per item in order. `answerOf` gives the batch's idempotency answer from the
 * outcomes: stored in the same transaction, so a replay finds exactly what this answered.
 */
export async function sendBatchFromApi(
  sender: Sender,
  items: readonly BatchItem[],
  deps: SendDeps,
  log: Logger,
  answerOf?: (outcomes: BatchOutcome[]) => KeyAnswer,
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = new Array(items.length);
  const composer = new SharedComposer();
  const requests = await Promise.all(
    items.map(async (item, i) => {
      if ("outcome" in item) {
        outcomes[i] = item.outcome;
        return null;
      }
      try {
        return await apiRequestOf(sender, item.body, deps, composer);
      } catch (err) {
        if (!(err instanceof InputProblem)) throw err;
        outcomes[i] = { kind: "refused", problem: err.problem };
        return null;
      }
    }),
  );
  // One look at the suppression list for every recipient of the batch.
  const emails = requests.flatMap((r) => (r ? [...r.to, ...r.cc, ...r.bcc].map((a) => a.address) : []));
  const suppressed = emails.length > 0 ? await deps.suppressed(sender.outbound.id, emails) : new Set<string>();
  const base = enqueueDeps(deps);
  const rowDeps = { ...base, suppressed: async () => suppressed };
  const queued: QueuedMessage[] = [];
  for (const [i, req] of requests.entries()) {
    if (!req) continue;
    const q = await queuedMessageOf(req, rowDeps);
    queued.push(q);
    outcomes[i] = { kind: "queued", message: q.message };
  }
  await enqueueMessages(queued, sender.outbound.id, base, answerOf?.(outcomes));
  for (const [i, req] of requests.entries()) {
    const o = outcomes[i];
    if (req && o?.kind === "queued") logQueued(o.message, req, log, "api");
  }
  return outcomes;
}
