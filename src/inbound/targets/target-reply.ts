// The target's answer decides the SMTP reply (docs/receiving.md shows the table). Pure decisions with
// table tests: outcome → reply and incoming status; several addresses → the worst reply.
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import type { SmtpReply } from "../../smtp/reply.ts";

export type TargetOutcome =
  | { kind: "answered"; status: number; contentType: string | null; body: string }
  | { kind: "timeout" }
  | { kind: "unreachable"; reason: string }
  /** Postroom could not store what the POST needs (attachments kept locally): not the target's fault. */
  | { kind: "local_failure"; diskFull: boolean };

export type StatusCategory = "successful" | "rejected" | "delayed";

export interface TargetVerdict {
  reply: SmtpReply;
  /** The incoming status: the HTTP code as a string, client_timeout or unreachable. */
  status: string;
  category: StatusCategory;
  /** The target's answer, kept for every non-2xx (first N bytes). */
  response: string | null;
}

export const REPLY_TEXT_MAX_CHARS = 200;

/** First line of a text/plain answer, control characters removed, at most 200 characters. */
export function replyTextFrom(contentType: string | null, body: string): string | null {
  if (!contentType || !/^text\/plain\b/i.test(contentType.trim())) return null;
  const firstLine = body.split(/\r?\n/, 1)[0] ?? "";
  const clean = firstLine.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  return clean === "" ? null : clean.slice(0, REPLY_TEXT_MAX_CHARS);
}

export function verdictFor(outcome: TargetOutcome): TargetVerdict {
  switch (outcome.kind) {
    case "local_failure":
      // Postroom itself refused the mail, for now: the sender will try again, and is told it is not the target.
      return {
        reply: outcome.diskFull ? SMTP_REPLIES.localStorageFull : SMTP_REPLIES.localStorageFailed,
        status: "rejected",
        category: "delayed",
        response: null,
      };
    case "timeout":
      return { reply: SMTP_REPLIES.targetTimeout, status: "client_timeout", category: "delayed", response: null };
    case "unreachable":
      return { reply: SMTP_REPLIES.targetUnreachable, status: "unreachable", category: "delayed", response: outcome.reason };
    case "answered": {
      const { status } = outcome;
      const text = replyTextFrom(outcome.contentType, outcome.body);
      const kept = outcome.body;
      if (status >= 200 && status < 300)
        return { reply: SMTP_REPLIES.accepted, status: String(status), category: "successful", response: null };
      if (status === 404) return { reply: SMTP_REPLIES.targetRejectedRecipient(text), status: "404", category: "rejected", response: kept };
      if (status >= 400 && status < 500)
        return { reply: SMTP_REPLIES.targetRejectedMessage(text), status: String(status), category: "rejected", response: kept };
      // 5xx asks the sender to retry; so does anything else unexpected (1xx, an unfollowed 3xx).
      return { reply: SMTP_REPLIES.targetFailed(text), status: String(status), category: "delayed", response: kept };
    }
  }
}

/** Permanent failure beats temporary failure beats success: the sender learns the worst. */
export function worstReply(replies: readonly SmtpReply[]): SmtpReply {
  const rank = (r: SmtpReply) => (r.code >= 500 ? 3 : r.code >= 400 ? 2 : 1);
  return replies.reduce((worst, r) => (rank(r) > rank(worst) ? r : worst));
}
