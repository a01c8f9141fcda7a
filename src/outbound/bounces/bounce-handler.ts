// Mail to our bounce addresses (bounce-address.ts): the address
// names the message and recipient, so a bounce cannot be attributed to the wrong one,
// and an address we never used is refused at RCPT. The message itself says what
// happened: a failure (hard or soft), an auto-reply, or a complaint.
import type { NewEvent } from "../../events/message-event.ts";
import type { BounceHandler } from "./bounce-hook.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import { parseBounceAddress } from "./bounce-address.ts";
import { parseBounce } from "./bounce-parse.ts";
import { classifyFailure } from "./failure-class.ts";
import { suppressionFor } from "../suppressions/suppression.ts";
import type { OutboundRepo } from "../queue/queue.port.ts";

/** A feedback report (RFC 5965): a recipient marked the message as spam. */
const isComplaint = (raw: Buffer) => /report-type\s*=\s*"?feedback-report/i.test(raw.subarray(0, 64 * 1024).toString("latin1"));

/** "550 5.1.1 user unknown" → 550; a DSN without a reply code gets none. */
const replyCodeOf = (text: string | null): number | null => {
  const m = /\b([245]\d\d)[ -]/.exec(text ?? "");
  return m ? Number(m[1]) : null;
};

export function bounceHandler(deps: {
  repo: OutboundRepo;
  clock: Clock;
  logger: Logger;
  /** outbound.suppression_ttl, read at each bounce. */
  suppressionTtlMs: () => number;
}): BounceHandler {
  const find = async (address: string) => {
    const ids = parseBounceAddress(address);
    if (!ids) return null;
    const recipient = await deps.repo.getRecipient(ids.messageId, ids.recipientId);
    return recipient;
  };
  return {
    async checkRecipient(address) {
      return (await find(address)) ? null : SMTP_REPLIES.unknownBounceAddress;
    },
    async receive(raw, envelope) {
      const report = isComplaint(raw) ? ({ kind: "complaint" } as const) : await parseBounce(raw);
      for (const address of envelope.rcptTo) {
        const recipient = await find(address);
        if (!recipient) continue;
        const at = deps.clock.nowMs();
        const event = (kind: NewEvent["kind"], details: Record<string, unknown>): NewEvent => ({
          messageId: recipient.messageId,
          recipientId: recipient.id,
          kind,
          details,
          createdAtMs: at,
        });
        const ttlMs = deps.suppressionTtlMs();
        let bounceClass: string | undefined;
        if (report.kind === "bounce") {
          const code = replyCodeOf(report.diagnostic);
          bounceClass = classifyFailure({ code, text: report.diagnostic, status: report.status });
          const details = {
            mx: report.reportingMta,
            smtp_code: code,
            smtp_response: report.diagnostic ?? report.status,
            attempt: recipient.attempts,
            status: report.status,
            reported_by: "dsn",
            bounce_class: bounceClass,
          };
          if (report.class === "hard") {
            const bounce = event("bounce", details);
            await deps.repo.addEvents(recipient.id, "bounce", [bounce], suppressionFor(bounce, ttlMs));
          } else await deps.repo.addEvents(recipient.id, null, [event("soft_bounce", details)]);
        } else if (report.kind === "auto_reply") {
          await deps.repo.addEvents(recipient.id, null, [event("auto_reply", { from: envelope.mailFrom })]);
        } else if (report.kind === "complaint") {
          const complaint = event("complaint", { from: envelope.mailFrom });
          await deps.repo.addEvents(recipient.id, null, [complaint], suppressionFor(complaint, ttlMs));
        }
        deps.logger.info("bounce address received mail", {
          message_id: recipient.messageId,
          recipient_id: recipient.id,
          kind: report.kind,
          class: report.kind === "bounce" ? report.class : undefined,
          bounce_class: bounceClass,
        });
      }
      return SMTP_REPLIES.bounceNoted;
    },
  };
}
