// SMTP submission (587 with STARTTLS, 465 with implicit TLS): authenticated clients hand
// us mail to send. Thin glue: AUTH against the outbound accounts, the same limits as the
// API, and the same queue; "250 2.0.0 Thanks! Queued as: <uuid>" names the sent message.
import { SMTPServer, type SMTPServerSession } from "smtp-server";
import type { AccountRegistry } from "../../auth/accounts.ts";
import type { Config } from "../../config/config.ts";
import type { Clock } from "../../lib/clock.ts";
import { newUuid } from "../../lib/ids.ts";
import type { AuthFailures } from "../../smtp/auth-failures.ts";
import type { Logger } from "../../lib/logger.ts";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../../lib/gc-pacer.ts";
import type { MemoryBudget, MessageCost } from "../../lib/memory-budget.ts";
import { readData, SessionBudget } from "../../smtp/data.ts";
import { guardSessions } from "../../smtp/guard.ts";
import { principalKey, rateOf, type RateLimits } from "../../lib/rate-limit.ts";
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import { formatReply, SMTP_SERVER_REPLY_OPTIONS, smtpError, smtpServerText, type SmtpReply } from "../../smtp/reply.ts";
import { headerAddresses, isAddress } from "../compose/addresses.ts";
import { authorFieldsOf, authorOf } from "../compose/author.ts";
import { addDateIfMissing, ownMessageIdOf, toCrlf } from "../compose/compose.ts";
import type { RememberedAnswer } from "../queue/enqueue.ts";
import type { KeyRef } from "../sending/idempotency.ts";
import { joinMessage, splitMessage } from "../compose/raw-headers.ts";
import { ContentRefused, SenderRefused, sendFromSmtp, type SendDeps, type Sender } from "../sending/send.ts";
import { nulField, takeSendingHeaders } from "./submission-headers.ts";

export interface SubmissionDeps {
  config(): Config;
  registry: AccountRegistry;
  limiter: RateLimits;
  clock: Clock;
  send: SendDeps;
  tls: { key: string; cert: string } | null;
  /** Implicit TLS (465) rather than STARTTLS (587). */
  implicitTls: boolean;
  /** Mail in flight (limits.mail_in_flight). */
  budget: MemoryBudget;
  logger: Logger;
  /** Failed AUTH attempts per client address, shared by both submission listeners. */
  authFailures: AuthFailures;
}

/**
 * What a submitted message holds at its peak until it is queued, as a multiple of its size
 * (measured with bench:memory, bench/RESULTS.md): the bytes read, the message with our
 * header edits, and the copy SQLite takes while it stores it.
 */
export const SUBMISSION_MESSAGE_COST: MessageCost = { copies: 3, fixedBytes: 64 * 1024 };

/** Room kept in front of a submitted message for the header lines we add (Message-ID, Date). */
const HEADER_ROOM_BYTES = 4096;

/** A username as a log line shows it: bounded, and without control characters (the client chose it). */
const USERNAME_LOGGED_CHARS = 256;
const loggedUsername = (username: string | undefined): string =>
  (username ?? "").slice(0, USERNAME_LOGGED_CHARS).replace(/[\u0000-\u001f\u007f]/g, "?");

export function createSubmissionServer(deps: SubmissionDeps): SMTPServer {
  const config = deps.config();
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
  const senderOf = (user: unknown): Sender | null => {
    const found = deps.registry.outbound(String(user));
    return found ? { account: found.account, outbound: found.outbound } : null;
  };
  // Authenticated: not a stranger, so the share strangers cannot take is open to it.
  const budget = new SessionBudget(
    deps.budget,
    "submission",
    () => ({ cost: SUBMISSION_MESSAGE_COST, frontRoom: HEADER_ROOM_BYTES, limitBytes: deps.config().outbound.maxSizeBytes }),
    () => ({ stranger: false, clientKey: null }),
  );
  /** The fields of every line about a session (docs/operations.md, Log lines). */
  const sessionFields = (session: SMTPServerSession) => ({
    session_id: session.id,
    ip: session.remoteAddress,
    tls: session.secure && session.tlsOptions ? (session.tlsOptions.version ?? "TLS") : null,
    outbound_account_id: session.user === undefined ? undefined : String(session.user),
  });
  /** A refusal, logged with the reply the client gets. */
  const refused = (session: SMTPServerSession, at: string, r: SmtpReply, fields: Record<string, string> = {}) => {
    deps.logger.info("submission refused", {
      ...sessionFields(session),
      from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
      at,
      reply: formatReply(r),
      ...fields,
    });
    return smtpError(r);
  };
  const server = new SMTPServer({
    name: config.hostname,
    banner: "Postroom ESMTP submission",
    secure: deps.implicitTls,
    size: config.outbound.maxSizeBytes,
    maxRecipients: config.outbound.maxRecipients,
    maxClients: config.smtp.maxConnections,
    socketTimeout: config.smtp.socketTimeoutMs,
    closeTimeout: 5000,
    authMethods: ["PLAIN", "LOGIN"],
    authOptional: false,
    allowInsecureAuth: config.smtp.allowInsecureAuth,
    hideSTARTTLS: !deps.tls || deps.implicitTls,
    disabledCommands: deps.tls ? [] : ["STARTTLS"],
    hideDSN: true,
    hideREQUIRETLS: true,
    ...SMTP_SERVER_REPLY_OPTIONS,
    disableReverseLookup: true,
    logger: false,
    ...(deps.tls ? { key: deps.tls.key, cert: deps.tls.cert } : {}),

    onAuth(auth, session, callback) {
      // Slowed, then refused, when one address goes on failing (smtp/auth-failures.ts); every
      // failure logged with who tried and from where, never the password.
      const ip = session.remoteAddress;
      const verdict = deps.authFailures.attempt(ip, deps.clock.nowMs());
      const failed = (reply: SmtpReply) => {
        deps.logger.warn("smtp auth failed", {
          session_id: session.id,
          ip,
          username: loggedUsername(auth.username),
          method: auth.method,
          failures: verdict.failures,
          delay_ms: verdict.delayMs,
          reply: formatReply(reply),
        });
        callback(smtpError(reply));
      };
      if (verdict.refuse) return failed(SMTP_REPLIES.authFailedTooOften);
      const check = () => {
        const principal = deps.registry.principalForNamedSecret(auth.username ?? "", auth.password ?? "");
        if (principal?.kind !== "outbound") return failed(verdict.closeIfWrong ? SMTP_REPLIES.authFailedTooOften : SMTP_REPLIES.authFailed);
        deps.authFailures.succeeded(ip);
        callback(null, { user: principal.outbound.id });
      };
      if (verdict.delayMs === 0) return check();
      setTimeout(check, verdict.delayMs).unref?.();
    },

    onMailFrom(address, session, callback) {
      const sender = senderOf(session.user);
      if (!sender) return callback(smtpError(SMTP_REPLIES.authFailed));
      const principal = { kind: "outbound" as const, ...sender };
      const rate = rateOf(principal);
      const reserve = () => {
        const declared = ((address.args || {}) as Record<string, unknown>).SIZE;
        const refusal = budget.mailFrom(session, declared);
        if (refusal) {
          deps.logger.info("submission deferred: memory budget full", {
            outbound_account_id: sender.outbound.id,
            at: "MAIL FROM",
            size: Number(declared),
          });
          return callback(smtpError(refusal));
        }
        callback();
      };
      if (!rate) return reserve();
      // On PostgreSQL the count is in the database the nodes share (docs/api.md, Rate limits).
      deps.limiter.take(principalKey(principal), rate, deps.clock.nowMs()).then(
        (decision) =>
          decision.allowed
            ? reserve()
            : callback(refused(session, "MAIL FROM", SMTP_REPLIES.sendingRateLimited, { from: address.address })),
        (err) => {
          deps.logger.error("submission: the rate limit could not be counted", { ...sessionFields(session), err });
          callback(smtpError(SMTP_REPLIES.temporaryFailure));
        },
      );
    },

    onRcptTo(address, session, callback) {
      if (!isAddress(address.address)) return callback(refused(session, "RCPT TO", SMTP_REPLIES.invalidRecipient, { to: address.address }));
      callback();
    },

    onData(stream, session, callback) {
      const sender = senderOf(session.user);
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
          if (read.oversized) return callback(refused(session, "end of DATA", SMTP_REPLIES.messageTooLarge(limit)));
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
          if (!author.ok) return callback(refused(session, "end of DATA", SMTP_REPLIES.senderRefused(author.reason)));
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
          if (err instanceof SenderRefused) return callback(refused(session, "end of DATA", SMTP_REPLIES.senderRefused(err.message)));
          if (err instanceof ContentRefused) return callback(refused(session, "end of DATA", SMTP_REPLIES.contentRefused(err.message)));
          if ((err as { problem?: { message: string } }).problem)
            return callback(refused(session, "end of DATA", SMTP_REPLIES.invalidMessage((err as { message: string }).message)));
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
    },
  });
  server.on("error", (err) => deps.logger.warn("submission smtp error", { err: (err as Error).message }));
  // AUTH only over TLS (unless allow_insecure_auth), and every limit, read from the
  // current config when a session opens (a reload reaches the next one).
  guardSessions(server, {
    limits: () => deps.config().smtp,
    serverOptions: () => {
      const c = deps.config();
      return {
        maxClients: c.smtp.maxConnections,
        socketTimeout: c.smtp.socketTimeoutMs,
        maxRecipients: c.outbound.maxRecipients,
        size: c.outbound.maxSizeBytes,
        allowInsecureAuth: c.smtp.allowInsecureAuth,
      };
    },
    allowInsecureAuth: () => deps.config().smtp.allowInsecureAuth,
    dataPaused: (session) => budget.waiting(session),
    beforeData: (session) => {
      const logged = (refusal: SmtpReply | null) => {
        if (refusal) deps.logger.info("submission deferred: memory budget full", { ip: session.remoteAddress, at: "DATA" });
        return refusal;
      };
      const verdict = budget.beforeData(session);
      return verdict instanceof Promise ? verdict.then(logged) : logged(verdict);
    },
    sessionClosed: (session) => budget.closed(session),
    logger: deps.logger,
  });
  return server;
}
