// Where mail to our bounce addresses goes. The inbound listener accepts RCPT for the
// bounce-address pattern and hands the message here; the outbound side (which knows the
// messages it sent) decides whether an address is real and what a bounce means.
import type { SmtpReply } from "../../smtp/reply.ts";

export interface BounceHandler {
  /** null to accept the recipient; a reply to refuse it (unknown or forged bounce address). */
  checkRecipient(address: string): Promise<SmtpReply | null>;
  /** The whole message, once received; the reply the sender gets. */
  receive(raw: Buffer, envelope: { mailFrom: string; rcptTo: string[]; remoteIp: string }): Promise<SmtpReply>;
}
