// What every handler of a submission session shares: the listener's deps, the sending
// outbound account a session authenticated as, the fields of its log lines, and a refusal
// logged with the reply the client gets. Apart so the AUTH handler (submission-auth.ts)
// and the data path (submission-data.ts) use them without importing the listener.
import type { SMTPServerSession } from "smtp-server";
import type { AccountRegistry } from "../../auth/accounts.ts";
import type { Config } from "../../config/config.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import type { MemoryBudget } from "../../lib/memory-budget.ts";
import type { RateLimits } from "../../auth/rate-limit.ts";
import type { AuthFailures } from "../../smtp/auth-failures.ts";
import { formatReply, smtpError, type SmtpReply } from "../../smtp/reply.ts";
import type { SendDeps, Sender } from "../sending/send.ts";

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

/** The outbound account a session authenticated as (and its account), or null when it is gone. */
export const senderOf = (registry: AccountRegistry, user: unknown): Sender | null => {
  const found = registry.outbound(String(user));
  return found ? { account: found.account, outbound: found.outbound } : null;
};

/** The fields of every line about a session (docs/operations.md, Log lines). */
export const sessionFields = (session: SMTPServerSession) => ({
  session_id: session.id,
  ip: session.remoteAddress,
  tls: session.secure && session.tlsOptions ? (session.tlsOptions.version ?? "TLS") : null,
  outbound_account_id: session.user === undefined ? undefined : String(session.user),
});

/** A refusal, logged with the reply the client gets. */
export const refused = (logger: Logger, session: SMTPServerSession, at: string, r: SmtpReply, fields: Record<string, string> = {}) => {
  logger.info("submission refused", {
    ...sessionFields(session),
    from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
    at,
    reply: formatReply(r),
    ...fields,
  });
  return smtpError(r);
};
