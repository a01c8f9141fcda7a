// (beyond, issue 34) POST /api/v0.1/{outboundAccountID}/messages/batch: {"messages": [E11
// body, ...]}, at most outbound.batch_max_messages. 200 {"results": [...]}, one per message
// in order: E11's answer with "status": 202, or {"status": 422, "error"} (or 429 past the
// send rate limit, which counts each message). Every valid message is on disk, in one
// transaction, before the answer; an Idempotency-Key covers the whole batch (send-body.ts).
import { t } from "elysia";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Logger } from "../lib/logger.ts";
import { describeValueErrors, formatProblem } from "../lib/validation.ts";
import type { MessageBody } from "../outbound/compose/message-input.ts";
import { type BatchItem, type BatchOutcome, sendBatchFromApi } from "../outbound/sending/send-batch.ts";
import type { SendDeps } from "../outbound/sending/send.ts";
import type { CallBudget } from "../http/authenticate.ts";
import { ApiError, errorResponses, invalid } from "../http/errors.ts";
import { rateHeaders } from "../http/rate-limit.ts";
import { tooManyRequests } from "../http/refusals.ts";
import { sendRoutes } from "./context.ts";
import { MessageBodySchema, MessageCommonSchema, MessageToSendSchema, messageCommon } from "./messages.ts";
import { DOCUMENTED_BODY } from "./openapi.ts";
import { MAX_IDEMPOTENCY_KEY_CHARS } from "../outbound/sending/idempotency.ts";

const checkMessage = TypeCompiler.Compile(MessageBodySchema);

/** Why a batch's message is not an E11 body (E11's own 422 text), or null. */
function bodyProblem(body: unknown): string | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "body must be a JSON object";
  if (checkMessage.Check(body)) return null;
  return describeValueErrors(checkMessage.Errors(body))
    .map((p) => (p.path ? formatProblem(p) : "body must be a JSON object"))
    .join("; ");
}

/** One result of the answer: E11's 202 body with its status, or the status and error. */
const resultOf = (o: BatchOutcome) => {
  switch (o.kind) {
    case "queued":
      return { status: 202 as const, ...messageCommon(o.message) };
    case "refused":
      return { status: 422, error: formatProblem(o.problem) };
    case "skipped":
      return { status: o.status, error: o.error };
  }
};

/**
 * The rate limit counts each message: the group's middleware counted the call (the first);
 * each further one takes its own slot, and one past the limit is not sent (429 in its place).
 */
async function countMessages(budget: CallBudget | null, items: BatchItem[], nowMs: number, headers: Record<string, string | number>) {
  if (!budget) return;
  for (const [i, item] of items.entries()) {
    if (i === 0 || "outcome" in item) continue;
    const decision = await budget.limiter.take(budget.key, budget.rate, nowMs);
    Object.assign(headers, rateHeaders(decision));
    if (!decision.allowed)
      items[i] = { outcome: { kind: "skipped", status: 429, error: tooManyRequests(budget.owner, budget.rate, decision.resetSeconds) } };
  }
}

const ResultSchema = t.Union(
  [
    t.Composite([t.Object({ status: t.Literal(202) }), MessageCommonSchema], { title: "BatchAccepted" }),
    t.Object(
      { status: t.Integer({ description: "422: the message breaks a rule; 429: past the send rate limit" }), error: t.String() },
      { title: "BatchRefused" },
    ),
  ],
  { title: "BatchResult" },
);

export function messageBatchRoutes(deps: SendDeps, logger: Logger) {
  return sendRoutes("messages-batch").post(
    "/messages/batch",
    async ({ principal, idempotent, replay, requestId, body, budget, set }) => {
      if (principal.kind !== "outbound") throw new ApiError(403);
      // The first answer's bytes, as stored (the type is the route's body: Elysia sends a Response as it is).
      if (replay) return replay as never;
      const max = deps.config().outbound.batchMaxMessages;
      if (body.messages.length === 0) throw invalid("messages", "needs at least one message");
      if (body.messages.length > max)
        throw invalid(
          "messages",
          `holds at most ${max} messages (outbound.batch_max_messages), not ${body.messages.length}; split the batch`,
        );
      const items: BatchItem[] = body.messages.map((m) => {
        const problem = bodyProblem(m);
        return problem === null
          ? { body: m as MessageBody }
          : { outcome: { kind: "refused", problem: { path: "", message: problem } } as BatchOutcome };
      });
      await countMessages(budget, items, deps.clock.nowMs(), set.headers);
      const log = requestId ? logger.child({ request_id: requestId }) : logger;
      const outboundId = principal.outbound.id;
      const outcomes = await sendBatchFromApi(
        { account: principal.account, outbound: principal.outbound },
        items,
        deps,
        log,
        idempotent ? (o) => idempotent.answer(outboundId, JSON.stringify({ results: o.map(resultOf) })) : undefined,
      );
      // Written out here: the response schema documents it, and checking 500 results against
      // it again (Elysia does so for a returned object) cost a tenth of the batch.
      const answer = new Response(JSON.stringify({ results: outcomes.map(resultOf) }), {
        status: 200,
        headers: { "content-type": "application/json; charset=utf-8" },
      });
      return answer as never;
    },
    {
      // Each message is checked on its own (bodyProblem): one bad message refuses only itself.
      body: t.Object(
        { messages: t.Array(t.Unknown(), { description: "E11 bodies, at most outbound.batch_max_messages (500)" }) },
        { additionalProperties: false, title: "MessageBatch" },
      ),
      headers: t.Object({
        "idempotency-key": t.Optional(
          t.String({
            minLength: 1,
            maxLength: MAX_IDEMPOTENCY_KEY_CHARS,
            description: "as E11's, for the whole batch: the same key and body get the first 200 again with Idempotent-Replayed: true",
          }),
        ),
      }),
      response: {
        200: t.Object({ results: t.Array(ResultSchema) }, { title: "MessageBatchResults" }),
        ...errorResponses(401, 403, 409, 413, 422, 429, 503),
      },
      detail: {
        operationId: "sendMessageBatch",
        summary:
          "(beyond) send up to 500 messages in one call: one result per message, in order; every valid one is queued before the answer",
        tags: ["Sending"],
        security: [{ smtpAuth: [] }],
        [DOCUMENTED_BODY]: {
          title: "MessageBatch",
          type: "object",
          additionalProperties: false,
          required: ["messages"],
          properties: { messages: { type: "array", maxItems: 500, items: MessageToSendSchema } },
        },
      },
    },
  );
}
