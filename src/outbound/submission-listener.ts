// SMTP submission (587 with STARTTLS, 465 with implicit TLS): authenticated clients hand
// us mail to send. Thin glue: AUTH against the outbound accounts, the same limits as the
// API, and the same queue; "250 2.0.0 Thanks! Queued as: <uuid>" names the sent message.
import { SMTPServer, type SMTPServerDataStream } from "smtp-server";
import type { AccountRegistry } from "../auth/accounts.ts";
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import { newUuid } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import { guardSessions } from "../lib/smtp-guard.ts";
import { answeredAtOnce, batchRepliesOf } from "../lib/smtp-reply-batching.ts";
import { principalKey, rateOf, type RateLimiter } from "../lib/rate-limit.ts";
import { reply, smtpError, smtpSuccessText } from "../lib/smtp-reply.ts";
import { isAddress, parseAddressList, type MailAddress } from "./addresses.ts";
import { authorFieldsOf, authorOf } from "./author.ts";
import { toCrlf } from "./compose.ts";
import { joinMessage, splitMessage } from "./raw-headers.ts";
import { SenderRefused, sendFromSmtp, type SendDeps, type Sender } from "./send.ts";
import { takeSendingHeaders } from "./submission-headers.ts";

export interface SubmissionDeps {
  config(): Config;
  registry: AccountRegistry;
  limiter: RateLimiter;
  clock: Clock;
  send: SendDeps;
  tls: { key: string; cert: string } | null;
  /** Implicit TLS (465) rather than STARTTLS (587). */
  implicitTls: boolean;
  logger: Logger;
}

const AUTH_FAILED = reply(535, "5.7.8", "authentication failed");

function readCapped(stream: SMTPServerDataStream, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    stream.once("end", () => resolve(size > limit || stream.sizeExceeded ? null : Buffer.concat(chunks)));
    stream.once("error", reject);
  });
}

const addressesOf = (values: string[]): MailAddress[] => {
  try {
    return parseAddressList(values);
  } catch {
    return [];
  }
};

export function createSubmissionServer(deps: SubmissionDeps): SMTPServer {
  const config = deps.config();
  const senderOf = (user: unknown): Sender | null => {
    const found = deps.registry.outbound(String(user));
    return found ? { account: found.account, outbound: found.outbound } : null;
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
    hideENHANCEDSTATUSCODES: false,
    disableReverseLookup: true,
    logger: false,
    ...(deps.tls ? { key: deps.tls.key, cert: deps.tls.cert } : {}),

    onAuth(auth, _session, callback) {
      const principal = deps.registry.principalForNamedSecret(auth.username ?? "", auth.password ?? "");
      if (!principal || principal.kind !== "outbound") return callback(smtpError(AUTH_FAILED));
      callback(null, { user: principal.outbound.id });
    },

    onMailFrom(_address, session, callback) {
      const sender = senderOf(session.user);
      if (!sender) return callback(smtpError(AUTH_FAILED));
      const principal = { kind: "outbound" as const, ...sender };
      const rate = rateOf(principal);
      if (rate && !deps.limiter.take(principalKey(principal), rate, deps.clock.nowMs()).allowed) {
        return callback(smtpError(reply(450, "4.7.1", "sending rate limit reached; try again later")));
      }
      callback();
    },

    onRcptTo(address, _session, callback) {
      if (!isAddress(address.address)) return callback(smtpError(reply(553, "5.1.3", "recipient address is not valid")));
      callback();
    },

    onData(stream, session, answer) {
      const callback = answeredAtOnce(answer);
      const sender = senderOf(session.user);
      const limit = deps.config().outbound.maxSizeBytes;
      readCapped(stream, limit)
        .then(async (raw) => {
          if (!sender) return callback(smtpError(AUTH_FAILED));
          if (!raw) return callback(smtpError(reply(552, "5.3.4", `message exceeds the size limit of ${limit} bytes`)));
          const id = newUuid();
          const message = splitMessage(toCrlf(raw));
          const h = message.headers;
          const { tags, priority } = takeSendingHeaders(h);
          // One unambiguous author (From, or Sender when From names several), else nothing is queued.
          const author = authorOf(authorFieldsOf(h));
          if (!author.ok) return callback(smtpError(reply(550, "5.7.1", author.reason)));
          const from = author.author;
          const to = addressesOf(h.all("to"));
          const cc = addressesOf(h.all("cc"));
          const listed = new Set([...to, ...cc].map((a) => a.address.toLowerCase()));
          const rcpts = session.envelope.rcptTo.map((r) => r.address);
          // The envelope decides who gets the message; the headers only say how it reads.
          const envelope = new Set(rcpts.map((r) => r.toLowerCase()));
          h.remove("bcc");
          let messageId = h.first("message-id")?.trim() ?? "";
          if (!/^<[^<>\s]+@[^<>\s]+>$/.test(messageId)) {
            messageId = `<${id}@${deps.config().hostname}>`;
            h.set("Message-ID", messageId);
          }
          if (!h.has("date")) h.prepend("Date", new Date(deps.clock.nowMs()).toUTCString().replace("GMT", "+0000"));
          const queued = await sendFromSmtp(
            sender,
            {
              id,
              from,
              to: to.filter((a) => envelope.has(a.address.toLowerCase())),
              cc: cc.filter((a) => envelope.has(a.address.toLowerCase())),
              bcc: rcpts.filter((r) => !listed.has(r.toLowerCase())).map((address) => ({ address, name: "" })),
              subject: h.first("subject"),
              messageId,
              tags,
              priority,
              raw: joinMessage(message),
              named: author.named,
            },
            deps.send,
          );
          callback(null, smtpSuccessText(reply(250, "2.0.0", `Thanks! Queued as: ${queued.id}`)));
        })
        .catch((err) => {
          if (err instanceof SenderRefused) return callback(smtpError(reply(550, "5.7.1", err.message)));
          if ((err as { problem?: { message: string } }).problem) return callback(smtpError(reply(554, "5.6.0", (err as { message: string }).message)));
          deps.logger.error("submission failed", { err });
          callback(smtpError(reply(451, "4.3.0", "temporary failure; try again later")));
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
      return { maxClients: c.smtp.maxConnections, socketTimeout: c.smtp.socketTimeoutMs, maxRecipients: c.outbound.maxRecipients, size: c.outbound.maxSizeBytes, allowInsecureAuth: c.smtp.allowInsecureAuth };
    },
    allowInsecureAuth: () => deps.config().smtp.allowInsecureAuth,
    logger: deps.logger,
  });
  if (!deps.implicitTls) batchRepliesOf(server);
  return server;
}
