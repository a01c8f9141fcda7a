// The inbound SMTP listener (port 25 in production): thin glue between smtp-server and
// the routing and posting decisions. No AUTH here; STARTTLS when a certificate is set.
import { SMTPServer, type SMTPServerSession } from "smtp-server";
import type { Config } from "../config/config.ts";
import { isDiskFull } from "../lib/disk-full.ts";
import { newId16 } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import type { MemoryBudget, MessageCost } from "../lib/memory-budget.ts";
import { readData, SessionBudget } from "../smtp/data.ts";
import { guardSessions } from "../smtp/guard.ts";
import { clientKey } from "../smtp/limits.ts";
import { SMTP_REPLIES } from "../smtp/replies.ts";
import { formatReply, SMTP_SERVER_REPLY_OPTIONS, smtpError, smtpServerText, type SmtpReply } from "../smtp/reply.ts";
import { limitRefusalReason, type SmtpRefusalReason } from "../metrics/labels.ts";
import { postMessage, TRACE_ROOM_BYTES } from "./post-message.ts";
import { recordRefusal } from "./statuses/status-rows.ts";
import type { AddressGroup, PostDeps, Transaction } from "./transaction.ts";
import type { AcceptedRecipient } from "./addresses/recipients.ts";
import { routeRecipient, type RouteDeps } from "./addresses/route.ts";

/** The [smtp] limits an inbound session reads when it starts. */
export type InboundLimits = Pick<
  Config["smtp"],
  | "maxMessageSizeBytes"
  | "maxRecipients"
  | "maxUnknownRecipients"
  | "maxConnections"
  | "socketTimeoutMs"
  | "maxConnectionsPerIp"
  | "maxJunkCommands"
  | "maxSessionMs"
  | "minDataRate"
  | "dataRateWindowMs"
>;

export interface InboundListenerDeps {
  hostname: string;
  limits: () => InboundLimits;
  route: () => RouteDeps;
  postDeps: () => PostDeps;
  tls: { key: string; cert: string } | null;
  /** Mail in flight (limits.mail_in_flight) and what one inbound message costs in it. */
  budget: MemoryBudget;
  messageCost(): MessageCost;
  logger: Logger;
  /** Counts messages by their reply and refusals by reason (/metrics). */
  metrics?: InboundMetrics;
}

export interface InboundMetrics {
  inboundMessage(replyCode: number): void;
  smtpRefusal(reason: SmtpRefusalReason): void;
}

/** The end-of-DATA answer, counted by the reply it gives (an error's code, else 250). */
function countedAnswer<T>(
  answer: (err?: (Error & { responseCode?: number }) | null, text?: T) => void,
  metrics: InboundMetrics | undefined,
): typeof answer {
  return (err, text) => {
    metrics?.inboundMessage(err ? (err.responseCode ?? 451) : 250);
    answer(err, text);
  };
}

/** Per-connection state: the transaction being built and the refused-recipient count. */
interface ConnectionState {
  groups: Map<string, AddressGroup>;
  bounceRcpts: string[];
  /** Every accepted recipient in RCPT order (the groups lose the order across addresses). */
  accepted: AcceptedRecipient[];
  refusedRcpts: number;
  /** Our id of the transaction (its Received line's id), new at every MAIL FROM. */
  id: string;
  /**
   * The session's lines carry session_id (smtp-server's id of the connection) and ip; from
   * MAIL FROM on, also the transaction's message_id, from and tls (docs/operations.md, Log lines).
   */
  log: Logger;
}

const states = new WeakMap<SMTPServerSession, ConnectionState>();
const stateOf = (s: SMTPServerSession, logger: Logger): ConnectionState => {
  let st = states.get(s);
  if (!st)
    states.set(
      s,
      (st = {
        groups: new Map(),
        bounceRcpts: [],
        accepted: [],
        refusedRcpts: 0,
        id: "",
        log: logger.child({ session_id: s.id, ip: s.remoteAddress }),
      }),
    );
  return st;
};

const tlsOf = (session: SMTPServerSession) =>
  session.secure && session.tlsOptions ? { protocol: session.tlsOptions.version ?? "TLS", cipher: session.tlsOptions.name } : null;

export function transactionOf(session: SMTPServerSession, st: ConnectionState): Transaction {
  return {
    id: st.id,
    log: st.log,
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
    helo: session.hostNameAppearsAs || session.remoteAddress,
    ehlo: session.openingCommand === "EHLO",
    remoteIp: session.remoteAddress,
    tls: tlsOf(session),
    authenticated: Boolean(session.user),
    groups: [...st.groups.values()],
    bounceRcpts: st.bounceRcpts,
    accepted: st.accepted,
  };
}

export function createInboundServer(deps: InboundListenerDeps): SMTPServer {
  const limits = deps.limits();
  // Port 25 clients are strangers to the budget, each held to its share by its address (an IPv6 /64).
  const budget = new SessionBudget(
    deps.budget,
    "inbound",
    () => ({ cost: deps.messageCost(), frontRoom: TRACE_ROOM_BYTES, limitBytes: deps.limits().maxMessageSizeBytes }),
    (session) => ({ stranger: true, clientKey: clientKey(session.remoteAddress) }),
  );
  /** A deferral for lack of memory: logged (at `at`) with the reply the client gets. */
  const deferred = (st: ConnectionState, at: string, refusal: SmtpReply, fields: Record<string, number | string> = {}) =>
    st.log.info("inbound message deferred: memory budget full", { at, reply: formatReply(refusal), ...fields });
  const server = new SMTPServer({
    name: deps.hostname,
    banner: "Postroom ESMTP",
    size: limits.maxMessageSizeBytes,
    maxRecipients: limits.maxRecipients,
    maxClients: limits.maxConnections,
    socketTimeout: limits.socketTimeoutMs,
    closeTimeout: 5000,
    authOptional: true,
    disabledCommands: deps.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    hideSTARTTLS: !deps.tls,
    hideDSN: true,
    ...SMTP_SERVER_REPLY_OPTIONS,
    hideREQUIRETLS: true,
    disableReverseLookup: true,
    logger: false,
    ...(deps.tls ? { key: deps.tls.key, cert: deps.tls.cert } : {}),

    onMailFrom(address, session, callback) {
      const st = stateOf(session, deps.logger);
      st.groups = new Map();
      st.bounceRcpts = [];
      st.accepted = [];
      st.id = newId16();
      st.log = deps.logger.child({
        session_id: session.id,
        ip: session.remoteAddress,
        tls: tlsOf(session)?.protocol ?? null,
        message_id: st.id,
        from: address.address,
      });
      const declared = ((address.args || {}) as Record<string, unknown>).SIZE;
      const refusal = budget.mailFrom(session, declared);
      if (refusal) {
        deferred(st, "MAIL FROM", refusal, { size: Number(declared) });
        return callback(smtpError(refusal));
      }
      callback();
    },

    onRcptTo(address, session, callback) {
      const st = stateOf(session, deps.logger);
      // The same recipient again (in any case): smtp-server keeps it once in the envelope,
      // and so do we, so it is neither posted nor listed twice.
      const lower = address.address.toLowerCase();
      if (st.accepted.some((r) => r.rcpt.toLowerCase() === lower)) return callback();
      routeRecipient(address.address, deps.route())
        .then(async (result) => {
          if (result.ok) {
            if (result.route.kind === "bounce") {
              st.bounceRcpts.push(address.address);
              st.accepted.push({ rcpt: address.address, accountId: null });
            } else {
              const { address: addr, customDomain } = result.route;
              const group = st.groups.get(addr.id) ?? { address: addr, customDomain, rcpts: [] };
              group.rcpts.push(address.address);
              st.groups.set(addr.id, group);
              st.accepted.push({ rcpt: address.address, accountId: addr.accountId });
            }
            return callback();
          }
          st.refusedRcpts++;
          deps.metrics?.smtpRefusal(st.refusedRcpts > deps.limits().maxUnknownRecipients ? "too_many_refused_recipients" : result.reason);
          // Past the limit the client is probing for addresses: answer, then hang up.
          const refusal = st.refusedRcpts > deps.limits().maxUnknownRecipients ? SMTP_REPLIES.tooManyRefusedRecipients : result.reply;
          // A known address gets an incoming status (its line names it); any other is only logged.
          if (result.address)
            await recordRefusal(
              "inbound recipient refused",
              [{ address: result.address, customDomain: null, rcpts: [address.address] }],
              transactionOf(session, st),
              refusal,
              null,
              deps.postDeps(),
            );
          else st.log.info("inbound recipient refused", { to: address.address, reply: formatReply(refusal) });
          callback(smtpError(refusal));
        })
        .catch((err) => {
          deps.metrics?.smtpRefusal("temporary_failure");
          if (isDiskFull(err)) {
            deps.postDeps().diskFull.report("inbound", err);
            return callback(smtpError(SMTP_REPLIES.localStorageFull));
          }
          st.log.error("recipient routing failed", { err, to: address.address });
          callback(smtpError(SMTP_REPLIES.temporaryFailure));
        });
    },

    onData(stream, session, answer) {
      const callback = countedAnswer(answer, deps.metrics);
      const st = stateOf(session, deps.logger);
      const options = budget.take(session);
      if (!options) {
        stream.resume();
        return callback(smtpError(SMTP_REPLIES.insufficientMemory));
      }
      const limit = options.limitBytes;
      readData(stream, options)
        .then(async (read) => {
          budget.settle(session, read, options);
          const tx = transactionOf(session, st);
          if (read.oversized) {
            const refusal = SMTP_REPLIES.messageTooLarge(limit);
            deps.metrics?.smtpRefusal("message_too_large");
            await recordRefusal("inbound message refused", tx.groups, tx, refusal, stream.byteLength, deps.postDeps());
            return callback(smtpError(refusal));
          }
          if (read.outgrown) {
            deps.budget.refused("inbound");
            deferred(st, "end of DATA", SMTP_REPLIES.insufficientMemory, {
              bytes: read.bytes,
              reason: options.reservation.evictedBy ?? "no_room",
            });
            return callback(smtpError(SMTP_REPLIES.insufficientMemory));
          }
          const result = await postMessage(read.raw, tx, deps.postDeps(), read.frontRoom);
          if (result.code < 400) callback(null, smtpServerText(result));
          else callback(smtpError(result));
        })
        .catch((err) => {
          // The client left in the middle of the message, or a limit cut it off (the
          // limit logged why): nothing was received, nothing went wrong here.
          if ((err as { code?: string }).code === "ECONNECTION")
            st.log.info("inbound message not received in full", { bytes: stream.byteLength });
          else if (isDiskFull(err)) {
            // Before any POST (a refusal's statuses, a parse): the sender retries. Once a target
            // has answered, a failed status write never gets here (status-retry.ts).
            deps.postDeps().diskFull.report("inbound", err);
            return callback(smtpError(SMTP_REPLIES.localStorageFull));
          } else st.log.error("inbound delivery failed", { err });
          callback(smtpError(SMTP_REPLIES.temporaryFailure));
        })
        // Posted, refused or failed, or the client gone: the message holds nothing any more.
        .finally(() => options.reservation.release());
    },
  });
  server.on("error", (err) => deps.logger.warn("inbound smtp error", { err: (err as Error).message }));
  // Every limit is read from the current config when a session opens (a reload reaches the next one).
  guardSessions(server, {
    limits: () => ({ ...deps.limits(), authTimeoutMs: null }),
    beforeData: (session) => {
      const logged = (refusal: SmtpReply | null) => {
        if (refusal) deferred(stateOf(session, deps.logger), "DATA", refusal);
        return refusal;
      };
      const verdict = budget.beforeData(session);
      return verdict instanceof Promise ? verdict.then(logged) : logged(verdict);
    },
    dataPaused: (session) => budget.waiting(session),
    sessionClosed: (session) => budget.closed(session),
    serverOptions: () => {
      const l = deps.limits();
      return {
        maxClients: l.maxConnections,
        socketTimeout: l.socketTimeoutMs,
        maxRecipients: l.maxRecipients,
        size: l.maxMessageSizeBytes,
      };
    },
    logger: deps.logger,
    limited: (limit) => {
      const reason = limitRefusalReason(limit);
      if (reason) deps.metrics?.smtpRefusal(reason);
    },
  });
  return server;
}
