// E11's Idempotency-Key (docs/sending.md, Idempotent sends): HTTP glue around the rules of
// src/outbound/idempotency.ts. The key is claimed before the body is read, so a request
// still uploading its body holds it too; the body's SHA-256 tells a replay (the first
// answer again, with Idempotent-Replayed: true) from another request with the same key.
import { createHash } from "node:crypto";
import type { RememberedAnswer } from "../outbound/queue/enqueue.ts";
import type { IdempotencyRepo } from "../outbound/sending/idempotency.port.ts";
import type { KeyAnswer, KeyRef } from "../outbound/sending/idempotency.ts";
import { idempotencyKeyOf } from "../outbound/sending/idempotency.ts";
import { errorResponse } from "../http/errors.ts";

/** The header on a replayed answer. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

const IN_FLIGHT = "Idempotency-Key: a request with this key is still being processed; send it again once that one is answered";
const OTHER_BODY = "Idempotency-Key: already used with another request body; use a new key for a new message";

export interface IdempotencyDeps {
  repo: IdempotencyRepo;
  nowMs(): number;
  /** retention.idempotency_keys; null: for ever. */
  keepMs(): number | null;
}

export class IdempotentRequest {
  private requestSha256: string | null = null;

  private constructor(
    private readonly repo: IdempotencyRepo,
    private readonly ref: KeyRef,
    /** The first request's answer and body hash when the key was answered; null: this request claimed it. */
    private readonly first: { answer: string; requestSha256: string | null } | null,
    /** The status of an answer that is kept (E11's 202; a batch's 200): a replay gets it again. */
    private readonly successStatus: number,
  ) {}

  /** For an E11 request: null without a key; a refusal (422, 409); or the request holding or replaying the key. */
  static async begin(
    req: Request,
    outboundAccountId: string,
    deps: IdempotencyDeps,
    successStatus = 202,
  ): Promise<{ refused: Response } | { request: IdempotentRequest } | null> {
    const parsed = idempotencyKeyOf((name) => req.headers.get(name));
    if (parsed === null) return null;
    if ("problem" in parsed) return { refused: errorResponse(422, parsed.problem) };
    const ref: KeyRef = { outboundAccountId, scope: "api", key: parsed.key };
    const found = await deps.repo.claim(ref, deps.nowMs(), deps.keepMs());
    if (found.kind === "in_flight") return { refused: errorResponse(409, IN_FLIGHT) };
    return { request: new IdempotentRequest(deps.repo, ref, found.kind === "answered" ? found : null, successStatus) };
  }

  /** Once the body is read: the answer to give instead of sending (a replay, or 409), or null to send. */
  answerFor(body: Uint8Array): Response | null {
    const sha256 = createHash("sha256").update(body).digest("hex");
    if (!this.first) {
      this.requestSha256 = sha256;
      return null;
    }
    if (this.first.requestSha256 !== sha256) return errorResponse(409, OTHER_BODY);
    return new Response(this.first.answer, {
      status: this.successStatus,
      headers: { "content-type": "application/json;charset=utf-8", [REPLAYED_HEADER]: "true" },
    });
  }

  /** For a batch: the claimed key and the answer to store with its messages. */
  answer(outboundAccountId: string, answer: string): KeyAnswer {
    return { outboundAccountId, scope: "api", key: this.ref.key, requestSha256: this.requestSha256, answer };
  }

  /** For the route: the claimed key, whose answer is stored with the message it queues. */
  remember(answerOf: RememberedAnswer["answerOf"]): RememberedAnswer {
    return { scope: "api", key: this.ref.key, requestSha256: this.requestSha256, answerOf };
  }

  /** The request is over with `status` (null: it failed): a claim that got no 202 is given up. */
  async finish(status: number | null): Promise<void> {
    if (!this.first && status !== this.successStatus) await this.repo.release(this.ref);
  }
}
