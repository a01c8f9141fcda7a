// E11's body middleware, in its group after authentication and the rate limit: the
// Idempotency-Key is claimed (or found answered) before the body is read; the message's
// memory is reserved before it is read and held until the message is queued (or refused);
// the body is read under E11's own cap and parsed. What it holds is given back once the
// answer is made (http/serve.ts awaits it).
import type { Principal } from "../auth/accounts.ts";
import type { Config } from "../config/config.ts";
import { parseJsonBody } from "../http/body.ts";
import { Answered, ApiError, errorResponse } from "../http/errors.ts";
import { payloadTooLarge } from "../http/refusals.ts";
import { exchangeOf } from "../http/exchange.ts";
import { declaredBytes, readCapped } from "../http/json-body.ts";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../lib/gc-pacer.ts";
import type { Logger } from "../lib/logger.ts";
import { costOf, MEMORY_RETRY_AFTER_S, type MemoryBudget, type MessageCost } from "../lib/memory-budget.ts";
import { type IdempotencyDeps, IdempotentRequest } from "./idempotent-request.ts";

/** E11 carries whole messages (Base64 attachments inflate them by 4/3): its cap follows outbound.max_size. */
/** What sets E11's body limit: the message's size, base64-encoded, plus room for the JSON. */
const SEND_LIMIT_KEY = "outbound.max_size";

export function sendBodyLimitBytes(config: Config): number {
  return Math.ceil((config.outbound.maxSizeBytes * 4) / 3) + 256 * 1024;
}

/**
 * What an E11 request holds at its peak until its message is queued, as a multiple of its
 * body's size (measured with bench:memory, bench/RESULTS.md: 3.2 with six 10 MB sends in
 * flight, more with fewer): the body, its text and the parsed JSON while it is parsed; then
 * the decoded attachments and the composed message (built from the composer's chunks, and
 * copied by SQLite as it is stored), and what the collector has not taken yet.
 */
export const API_MESSAGE_COST: MessageCost = { copies: 4, fixedBytes: 64 * 1024 };

export interface SendBodyDeps {
  config(): Config;
  logger: Logger;
  /** Memory held by mail in flight (limits.mail_in_flight): E11 reserves in it. */
  budget: MemoryBudget;
  idempotency: IdempotencyDeps;
}

/** What E11's middleware adds to its context: the Idempotency-Key it claimed, if any. */
export type SendContext = {
  idempotent: IdempotentRequest | null;
  /**
   * A batch's replayed answer (200), for its route to return: thrown from here, as E11's 202
   * is, Elysia would answer it as an error (500), a 2xx thrown being taken for one.
   */
  replay?: Response;
};

const outboundIdOf = (p: Principal): string => (p.kind === "outbound" ? p.outbound.id : p.account.id);

/** POST /messages/batch: its answer is 200, and each of its messages counts in the memory budget. */
const isBatch = (request: Request): boolean => new URL(request.url).pathname.endsWith(BATCH_PATH_END);
const BATCH_PATH_END = "/messages/batch";

export function sendBody(deps: SendBodyDeps) {
  return async (ctx: { request: Request; principal: Principal; body: unknown }): Promise<SendContext> => {
    const { request } = ctx;
    const exchange = exchangeOf(request);
    const batch = isBatch(request);
    const keyed = await IdempotentRequest.begin(request, outboundIdOf(ctx.principal), deps.idempotency, batch ? 200 : 202);
    if (keyed && "refused" in keyed) throw new Answered(keyed.refused);
    const idempotent = keyed?.request ?? null;
    // Last: the memory is given back even if the store fails to give up the claim.
    if (idempotent) exchange.afterAnswer.push((status) => idempotent.finish(status));
    if (request.method !== "POST") return { idempotent };
    const config = deps.config();
    const limitBytes = sendBodyLimitBytes(config);
    const declared = declaredBytes(request);
    if (declared > limitBytes) throw new ApiError(413, payloadTooLarge(limitBytes, SEND_LIMIT_KEY));
    const expected = request.headers.has("content-length") && Number.isSafeInteger(declared) && declared >= 0 ? declared : limitBytes;
    const reservation = deps.budget.reserve(costOf(API_MESSAGE_COST, expected), "api");
    if (!reservation) {
      deps.logger.info("send deferred: memory budget full", { outbound_account_id: outboundIdOf(ctx.principal), bytes: expected });
      throw new Answered(
        errorResponse(503, "insufficient system resources, try again later", { "Retry-After": String(MEMORY_RETRY_AFTER_S) }),
      );
    }
    exchange.afterAnswer.unshift(() => {
      // The body, its text, the parsed JSON and the composer's work are garbage now.
      if (declared > LARGE_MESSAGE_BYTES) garbageMade(API_MESSAGE_COST.copies * declared);
      reservation.release();
    });
    const bytes = await readCapped(request, limitBytes, SEND_LIMIT_KEY);
    const replay = idempotent?.answerFor(bytes);
    if (replay && !(batch && replay.status === 200)) throw new Answered(replay);
    ctx.body = parseJsonBody(bytes, config.http.maxJsonDepth);
    if (replay) return { idempotent, replay };
    // The body's bytes and text are garbage once parsed: a large one's count.
    if (declared > LARGE_MESSAGE_BYTES) garbageMade(2 * declared);
    if (batch) reserveBatch(deps, ctx.body, exchange.afterAnswer, outboundIdOf(ctx.principal));
    return { idempotent };
  };
}

/**
 * A batch holds what its bytes cost (reserved above) and, beyond that, what each of its
 * messages costs while it is composed and queued (API_MESSAGE_COST.fixedBytes each, as one
 * E11 call would): reserved once its messages are counted, held until the answer.
 */
function reserveBatch(deps: SendBodyDeps, body: unknown, afterAnswer: ((status: number | null) => unknown)[], outboundId: string): void {
  const messages = (body as { messages?: unknown } | null)?.messages;
  const count = Array.isArray(messages) ? Math.min(messages.length, deps.config().outbound.batchMaxMessages) : 0;
  if (count <= 1) return;
  const bytes = (count - 1) * API_MESSAGE_COST.fixedBytes;
  const reservation = deps.budget.reserve(bytes, "api");
  if (!reservation) {
    deps.logger.info("batch deferred: memory budget full", { outbound_account_id: outboundId, messages: count, bytes });
    throw new Answered(
      errorResponse(503, "insufficient system resources, try again later", { "Retry-After": String(MEMORY_RETRY_AFTER_S) }),
    );
  }
  afterAnswer.unshift(() => reservation.release());
}
