// The data path of SMTP submission: the message read under the memory budget, its
// headers read for the author, recipients, tags and class, NUL refused, its Message-ID
// claimed (a message sent again is not queued again), and the message queued; the reply
// names the sent message. Apart from the listener glue (submission-listener.ts), which
// hands it to smtp-server as onData.
import type { SMTPServer } from "smtp-server";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../../lib/gc-pacer.ts";
import { newUuid } from "../../lib/ids.ts";
import { readData, type SessionBudget } from "../../smtp/data.ts";
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import { smtpError, smtpServerText, type SmtpReply } from "../../smtp/reply.ts";
import { headerAddresses } from "../compose/addresses.ts";
import { authorFieldsOf, authorOf } from "../compose/author.ts";
import { addDateIfMissing, ownMessageIdOf, toCrlf } from "../compose/compose.ts";
import { joinMessage, splitMessage } from "../compose/raw-headers.ts";
import type { RememberedAnswer } from "../queue/enqueue.ts";
import type { KeyRef } from "../sending/idempotency.ts";
import { ContentRefused, SenderRefused, sendFromSmtp } from "../sending/send.ts";
import { nulField, takeSendingHeaders } from "./submission-headers.ts";
import { refused, senderOf, sessionFields, type SubmissionDeps } from "./submission-session.ts";

/** The onData handler of a submission listener; `budget` is the listener's share of mail in flight. */
export function submissionData(deps: SubmissionDeps, budget: SessionBudget): SMTPServer["onData"] {
  /**
   * A Message-ID this outbound account submitted within retention.idempotency_keys: the
   * first one's 250 again (nothing queued), or 451 while that one is being queued; null
   * when it is new (claimed now).
   */
  const claimMessageId = async (outboundAccountId: string, messageId: string): Promise<{ ok: boolean; reply: SmtpReply } | null> => {
    const found = await deps.send.idempotency.claim(
      { outboundAccountId, scope: "smtp", key: messageId },
      deps.clock.nowMs(),
      deps.config().retention.keepMs.idempotency_keys,
    );
    if (found.kind === "answered") {
      deps.logger.info("submission: Message-ID sent before, not queued again", {
        outbound_account_id: outboundAccountId,
        id: found.answer,
      });
      return { ok: true, reply: SMTP_REPLIES.queued(found.answer) };
    }
    if (found.kind === "in_flight") return { ok: false, reply: SMTP_REPLIES.messageIdInFlight };
    return null;
  };
  return (stream, session, callback) => {
    const sender = senderOf(deps.registry, session.user);
    const options = budget.take(session);
    if (!options) {
      stream.resume();
      return callback(smtpError(SMTP_REPLIES.insufficientMemory));
    }
    const limit = options.limitBytes;
    let claimed: KeyRef | null = null;
    readData(stream, options)
      .then(async (read) => {
        budget.settle(session, read, options);
        if (!sender) return callback(smtpError(SMTP_REPLIES.authFailed));
        // Suspended since MAIL FROM: refused all the same.
        if (deps.registry.suspended(sender.account.id))
          return callback(refused(deps.logger, session, "end of DATA", SMTP_REPLIES.senderSuspended));
        if (read.oversized) return callback(refused(deps.logger, session, "end of DATA", SMTP_REPLIES.messageTooLarge(limit)));
        if (read.outgrown) {
          deps.budget.refused("submission");
          deps.logger.info("submission deferred: memory budget full", {
            outbound_account_id: sender.outbound.id,
            at: "end of DATA",
            bytes: read.bytes,
            reason: options.reservation.evictedBy ?? "no_room",
          });
          return callback(smtpError(SMTP_REPLIES.insufficientMemory));
        }
        const id = newUuid();
        const crlf = toCrlf(read.raw);
        const message = splitMessage(crlf);
        const h = message.headers;
        const { tags, priority } = takeSendingHeaders(h);
        // One unambiguous author (From, or Sender when From names several), else nothing is queued.
        const author = authorOf(authorFieldsOf(h));
        if (!author.ok) return callback(refused(deps.logger, session, "end of DATA", SMTP_REPLIES.senderRefused(author.reason)));
        const from = author.author;
        const to = headerAddresses(h.all("to"));
        const cc = headerAddresses(h.all("cc"));
        const listed = new Set([...to, ...cc].map((a) => a.address.toLowerCase()));
        const rcpts = session.envelope.rcptTo.map((r) => r.address);
        // The envelope decides who gets the message; the headers only say how it reads.
        const envelope = new Set(rcpts.map((r) => r.toLowerCase()));
        h.remove("bcc");
        let messageId = ownMessageIdOf(h);
        const subject = h.first("subject");
        // What is stored of the message holds no NUL: refused before anything is (the Message-ID claim first).
        const nul = nulField({
          From: [from, ...(author.named ?? [])],
          To: to,
          Cc: cc,
          Subject: subject,
          "Message-ID": messageId,
          "X-Postroom-Tags": tags,
        });
        if (nul)
          return callback(
            refused(
              deps.logger,
              session,
              "end of DATA",
              SMTP_REPLIES.invalidMessage(`the ${nul} field holds NUL (U+0000); remove it and send the message again`),
            ),
          );
        // The client's own Message-ID: a message sent again with it is not queued again.
        let remember: RememberedAnswer | undefined;
        if (messageId !== null) {
          const repeated = await claimMessageId(sender.outbound.id, messageId);
          if (repeated) return repeated.ok ? callback(null, smtpServerText(repeated.reply)) : callback(smtpError(repeated.reply));
          remember = { scope: "smtp", key: messageId, requestSha256: null, answerOf: (m) => m.id };
          claimed = { outboundAccountId: sender.outbound.id, scope: "smtp", key: messageId };
        } else {
          messageId = `<${id}@${deps.config().hostname}>`;
          h.set("Message-ID", messageId);
        }
        addDateIfMissing(h, new Date(deps.clock.nowMs()));
        // The header section goes back in front of the body in the same buffer (its old
        // section and the room kept in front of it are ours): the message is not copied.
        const raw = joinMessage(message, crlf === read.raw ? read.raw.byteOffset - read.frontRoom : crlf.byteOffset);
        const queued = await sendFromSmtp(
          sender,
          {
            id,
            from,
            to: to.filter((a) => envelope.has(a.address.toLowerCase())),
            cc: cc.filter((a) => envelope.has(a.address.toLowerCase())),
            bcc: rcpts.filter((r) => !listed.has(r.toLowerCase())).map((address) => ({ address, name: "" })),
            subject,
            messageId,
            tags,
            priority,
            raw,
            named: author.named,
            remember,
          },
          deps.send,
          deps.logger.child(sessionFields(session)),
        );
        claimed = null;
        callback(null, smtpServerText(SMTP_REPLIES.queued(queued.id)));
      })
      .catch((err) => {
        if (err instanceof SenderRefused)
          return callback(refused(deps.logger, session, "end of DATA", SMTP_REPLIES.senderRefused(err.message)));
        if (err instanceof ContentRefused)
          return callback(refused(deps.logger, session, "end of DATA", SMTP_REPLIES.contentRefused(err.message)));
        if ((err as { problem?: { message: string } }).problem)
          return callback(refused(deps.logger, session, "end of DATA", SMTP_REPLIES.invalidMessage((err as { message: string }).message)));
        if ((err as { code?: string }).code === "ECONNECTION")
          deps.logger.info("submitted message not received in full", sessionFields(session));
        else deps.logger.error("submission failed", { ...sessionFields(session), err });
        callback(smtpError(SMTP_REPLIES.temporaryFailure));
      })
      // Queued, refused or failed, or the client gone: the message holds nothing any more.
      .finally(() => {
        // Not queued: its Message-ID may be sent again.
        if (claimed)
          void deps.send.idempotency
            .release(claimed)
            .catch((err) => deps.logger.error("submission: Message-ID claim not given up", { ...sessionFields(session), err }));
        // What SQLite copied and the header edits made are garbage now.
        if (stream.byteLength > LARGE_MESSAGE_BYTES) garbageMade(2 * stream.byteLength);
        options.reservation.release();
      });
  };
}
