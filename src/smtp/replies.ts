// Every SMTP reply Postroom writes itself, once, by name: the decisions (route, parse,
// target verdicts, session limits, submission checks) return these and the listeners send
// them. docs/receiving.md and docs/sending.md document them for senders; the wire tests
// (test/e2e/inbound-replies, abuse-smtp, smtp-limits, submission...) hold them fixed. A
// reply whose text depends on something (a limit, the target's own words) is a function.
import type { RateLimit } from "../config/units.ts";
import { rateText } from "../config/units.ts";
import { reply, type SmtpReply } from "./reply.ts";

export const SMTP_REPLIES = {
  // ---- recipients (RCPT TO)
  relayNotPermitted: reply(550, "5.7.1", "relay not permitted"),
  noSuchRecipient: reply(550, "5.1.1", "no such recipient here"),
  /** The address's account is suspended by the operator (API.md section 10). */
  recipientSuspended: reply(550, "5.7.1", "this address's account is suspended; mail to it is refused"),
  regexpMismatch: reply(550, "5.1.1", "recipient does not match the regexp"),
  invalidRecipient: reply(553, "5.1.3", "recipient address is not valid"),
  unknownBounceAddress: reply(550, "5.1.1", "unknown bounce address"),
  tooManyRefusedRecipients: reply(421, "4.7.0", "too many refused recipients; closing connection"),

  // ---- the message (DATA)
  messageTooLarge: (limitBytes: number): SmtpReply => reply(552, "5.3.4", `message exceeds the size limit of ${limitBytes} bytes`),
  headerTooLarge: (maxHeaderBytes: number): SmtpReply => reply(552, "5.3.4", `message header is larger than ${maxHeaderBytes} bytes`),
  partHeaderTooLarge: (maxHeaderBytes: number): SmtpReply =>
    reply(552, "5.3.4", `a MIME part header is larger than ${maxHeaderBytes} bytes`),
  mimeTooDeep: (maxMimeDepth: number): SmtpReply => reply(554, "5.6.0", `message nests MIME parts deeper than ${maxMimeDepth} levels`),
  tooManyMimeParts: (maxMimeParts: number): SmtpReply => reply(554, "5.6.0", `message has more than ${maxMimeParts} MIME parts`),
  insufficientMemory: reply(451, "4.3.1", "insufficient system resources, try again later"),
  /** Something of ours failed that a later try may not meet. */
  temporaryFailure: reply(451, "4.3.0", "temporary failure; try again later"),
  /** The message could not be parsed for a reason other than a limit. */
  unprocessable: reply(451, "4.3.0", "the message could not be processed; try again later"),
  localStorageFull: reply(451, "4.3.0", "Local storage on this server is full; try again later"),
  localStorageFailed: reply(451, "4.3.0", "Local storage on this server failed; try again later"),

  // ---- the target's answer (inbound), with the target's own first line where it gave one
  accepted: reply(250, "2.0.0", "Accepted"),
  targetTimeout: reply(451, "4.4.7", "The target did not answer in time; try again later"),
  targetUnreachable: reply(451, "4.4.1", "The target could not be reached; try again later"),
  targetRejectedRecipient: (text: string | null): SmtpReply => reply(554, "5.1.1", text ?? "Recipient rejected by the target"),
  targetRejectedMessage: (text: string | null): SmtpReply => reply(550, "5.7.1", text ?? "Message rejected by the target"),
  targetFailed: (text: string | null): SmtpReply => reply(451, "4.3.0", text ?? "The target failed; try again later"),
  /** (beyond) on_target_failure = "queue": the target failed, the message is kept and posted again by us. */
  acceptedQueued: reply(250, "2.0.0", "Accepted; the target is unavailable, the message is kept and will be posted again"),
  /** (beyond) spam_threshold: the score and the limit, so the sender's bounce says why. */
  spamRefused: (score: string, threshold: number): SmtpReply =>
    reply(550, "5.7.1", `Message refused as spam: SpamAssassin score ${score} is above this address's limit of ${threshold}`),

  // ---- mail to our bounce addresses
  bounceNoted: reply(250, "2.0.0", "Thanks, noted"),

  // ---- session limits (both listeners)
  tooManyConnections: reply(421, "4.7.0", "Too many connections from your address; try again later"),
  tooManyJunkCommands: reply(421, "4.7.0", "Too many commands without mail; closing connection"),
  dataTooSlow: (minRateBytesPerS: number): SmtpReply =>
    reply(421, "4.4.2", `Data arriving too slowly (under ${minRateBytesPerS} bytes per second); closing connection`),
  /** `duration` as durationText writes it ("10m"). */
  sessionTimeLimit: (duration: string): SmtpReply => reply(421, "4.4.2", `Session time limit of ${duration} reached; closing connection`),
  authTimeLimit: (duration: string): SmtpReply => reply(421, "4.7.0", `Authentication required within ${duration}; closing connection`),
  starttlsFirst: reply(
    538,
    "5.7.11",
    "Must issue a STARTTLS command first: AUTH is offered only over TLS, so that passwords never cross the network in clear",
  ),
  encryptionRequired: reply(
    538,
    "5.7.11",
    "Encryption required for requested authentication mechanism: this listener has no certificate (the tls section sets one); use port 465 or STARTTLS once it has",
  ),

  // ---- submission (587/465)
  authFailed: reply(
    535,
    "5.7.8",
    "authentication failed: the username is the outbound account's id (accounts.outbound.id), the password its key (accounts.outbound.api_keys)",
  ),
  /** smtp.auth_failures_before_close reached from the client's address (the connection closes). */
  authFailedTooOften: reply(421, "4.7.0", "Too many failed logins from your address; try again later"),
  queued: (messageId: string): SmtpReply => reply(250, "2.0.0", `Thanks! Queued as: ${messageId}`),
  messageIdInFlight: reply(451, "4.3.0", "a message with this Message-ID is being queued; try again later"),
  sendingRateLimited: (outboundAccountId: string, rate: RateLimit, retryAfterS: number): SmtpReply =>
    reply(
      450,
      "4.7.1",
      `sending rate limit reached: outbound account ${outboundAccountId} allows ${rateText(rate)} (accounts.outbound.send_rate_limit); try again in ${retryAfterS} s`,
    ),
  /** The outbound account's account is suspended by the operator (API.md section 10). */
  senderSuspended: reply(550, "5.7.1", "this account is suspended; its mail is refused until an operator lifts the suspension"),
  /** The sender may not send as the From it gave (`reason` says why). */
  senderRefused: (reason: string): SmtpReply => reply(550, "5.7.1", fitLine(reason)),
  /** The message carries what may not be sent, such as a blocked attachment (`reason` says what). */
  contentRefused: (reason: string): SmtpReply => reply(554, "5.7.1", reason),
  /** The message cannot be sent as it is (`problem` says why). */
  invalidMessage: (problem: string): SmtpReply => reply(554, "5.6.0", problem),
} as const;

/**
 * A reply line is at most 512 octets with its code and CRLF (RFC 5321, 4.5.3.1.5); a reason
 * naming long domains and addresses is cut to fit rather than sent over the limit.
 */
export function fitLine(text: string, maxChars = 480): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 3)}...`;
}
