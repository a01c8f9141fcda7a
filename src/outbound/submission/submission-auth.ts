// AUTH on the submission listeners: PLAIN and LOGIN against the outbound accounts' SMTP
// credentials, slowed and then refused when one client goes on failing. Apart from the
// listener glue (submission-listener.ts), which hands it to smtp-server as onAuth.
import type { SMTPServer } from "smtp-server";
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import { formatReply, smtpError, type SmtpReply } from "../../smtp/reply.ts";
import type { SubmissionDeps } from "./submission-session.ts";

/** A username as a log line shows it: bounded, and without control characters (the client chose it). */
const USERNAME_LOGGED_CHARS = 256;
const loggedUsername = (username: string | undefined): string =>
  (username ?? "").slice(0, USERNAME_LOGGED_CHARS).replace(/[\u0000-\u001f\u007f]/g, "?");

/** The onAuth handler of a submission listener. */
export const submissionAuth =
  (deps: SubmissionDeps): SMTPServer["onAuth"] =>
  (auth, session, callback) => {
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
  };
