// SMTP submission (587 with STARTTLS, 465 with implicit TLS): authenticated clients hand
// us mail to send. Thin glue: AUTH against the outbound accounts, the same limits as the
// API, and the same queue; "250 2.0.0 Thanks! Queued as: <uuid>" names the sent message.
// AUTH is in submission-auth.ts, the data path (read, check, queue) in submission-data.ts,
// what their handlers share in submission-session.ts.
import { SMTPServer } from "smtp-server";
import type { MessageCost } from "../../lib/memory-budget.ts";
import { principalKey, rateOf } from "../../auth/rate-limit.ts";
import { SessionBudget } from "../../smtp/data.ts";
import { guardSessions } from "../../smtp/guard.ts";
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import { SMTP_SERVER_REPLY_OPTIONS, smtpError, type SmtpReply } from "../../smtp/reply.ts";
import { isAddress } from "../compose/addresses.ts";
import { submissionAuth } from "./submission-auth.ts";
import { submissionData } from "./submission-data.ts";
import { refused, senderOf, sessionFields, type SubmissionDeps } from "./submission-session.ts";

/**
 * What a submitted message holds at its peak until it is queued, as a multiple of its size
 * (measured with bench:memory, bench/RESULTS.md): the bytes read, the message with our
 * header edits, and the copy SQLite takes while it stores it.
 */
export const SUBMISSION_MESSAGE_COST: MessageCost = { copies: 3, fixedBytes: 64 * 1024 };

/** Room kept in front of a submitted message for the header lines we add (Message-ID, Date). */
const HEADER_ROOM_BYTES = 4096;

export function createSubmissionServer(deps: SubmissionDeps): SMTPServer {
  const config = deps.config();
  // Authenticated: not a stranger, so the share strangers cannot take is open to it.
  const budget = new SessionBudget(
    deps.budget,
    "submission",
    () => ({ cost: SUBMISSION_MESSAGE_COST, frontRoom: HEADER_ROOM_BYTES, limitBytes: deps.config().outbound.maxSizeBytes }),
    () => ({ stranger: false, clientKey: null }),
  );
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

    onAuth: submissionAuth(deps),

    onMailFrom(address, session, callback) {
      const sender = senderOf(deps.registry, session.user);
      if (!sender) return callback(smtpError(SMTP_REPLIES.authFailed));
      if (deps.registry.suspended(sender.account.id))
        return callback(refused(deps.logger, session, "MAIL FROM", SMTP_REPLIES.senderSuspended));
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
            : callback(
                refused(
                  deps.logger,
                  session,
                  "MAIL FROM",
                  SMTP_REPLIES.sendingRateLimited(sender.outbound.id, rate, decision.resetSeconds),
                  {
                    from: address.address,
                  },
                ),
              ),
        (err) => {
          deps.logger.error("submission: the rate limit could not be counted", { ...sessionFields(session), err });
          callback(smtpError(SMTP_REPLIES.temporaryFailure));
        },
      );
    },

    onRcptTo(address, session, callback) {
      if (!isAddress(address.address))
        return callback(refused(deps.logger, session, "RCPT TO", SMTP_REPLIES.invalidRecipient, { to: address.address }));
      callback();
    },

    onData: submissionData(deps, budget),
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
