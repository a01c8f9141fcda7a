// The transaction that reached the end of DATA, and what posting its message needs: the
// types every step of the inbound pipeline (post-message.ts, the status rows, the posting
// to one address) shares. Apart so those steps import them without importing each other.
import type { Clock } from "../lib/clock.ts";
import type { DiskFullLog } from "../lib/disk-full.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Logger } from "../lib/logger.ts";
import type { Address } from "./addresses/address.ts";
import type { CustomDomain } from "./addresses/custom-domain.ts";
import type { AcceptedRecipient } from "./addresses/recipients.ts";
import type { LocalAttachments } from "./attachments/local-attachments.port.ts";
import type { BounceHandler } from "../outbound/bounces/bounce-hook.ts";
import type { AuthChecker, AuthSession } from "./parse/auth-checks.ts";
import type { Examined } from "./parse/examine.ts";
import type { ExtractedMessage } from "./parse/extract.ts";
import type { ParseLimits } from "./parse/parse.ts";
import type { SpamdResult } from "./parse/spamd.ts";
import type { QueueSettings } from "./queue/keep-for-later.ts";
import type { StatusRetry } from "./statuses/status-retry.ts";
import type { StatusRepo } from "./statuses/statuses.port.ts";
import type { TargetPostContext } from "./targets/target-post.ts";

/** The recipients of one transaction that reach one address. */
export interface AddressGroup {
  address: Address;
  customDomain: CustomDomain | null;
  rcpts: string[];
}

export interface Transaction {
  /** Our id of the transaction: its Received line's id, and message_id in the log. */
  id: string;
  /** Logs with the session's and the transaction's fields bound (session_id, message_id, from, ip, tls). */
  log: Logger;
  mailFrom: string;
  helo: string;
  /** The client greeted with EHLO (not HELO). */
  ehlo: boolean;
  remoteIp: string;
  /** TLS protocol and cipher of the session, when it was encrypted. */
  tls: { protocol: string; cipher: string } | null;
  authenticated: boolean;
  groups: AddressGroup[];
  bounceRcpts: string[];
  /** Every accepted recipient, in RCPT order. */
  accepted: AcceptedRecipient[];
}

export interface PostDeps {
  hostname: string;
  limits: ParseLimits;
  /**
   * Parses and extracts a message (on a worker thread when the pool has one); its first
   * `traceBytes` are our own trace lines, not counted against the sender's header limit.
   */
  extract(raw: Buffer, limits: ParseLimits, traceBytes: number): Promise<ExtractedMessage>;
  /** Parses and extracts a message and checks its sender (examine.ts), on a worker thread when the pool has one. */
  examine(raw: Buffer, limits: ParseLimits, traceBytes: number, session: AuthSession): Promise<Examined>;
  attachmentUrlTtlMs: number;
  post: TargetPostContext;
  resolver: DnsResolver;
  auth: AuthChecker;
  statuses: StatusRepo;
  /** Takes the statuses whose write failed after their targets answered, and writes them again later. */
  statusRetry: Pick<StatusRetry, "failed">;
  localAttachments: LocalAttachments;
  bounces: BounceHandler;
  clock: Clock;
  logger: Logger;
  diskFull: DiskFullLog;
  /** (beyond) Scores a message with SpamAssassin (inbound.spamd), or null when that is off. */
  spamd: ((raw: Buffer) => Promise<SpamdResult>) | null;
  /** (beyond) Where mail for addresses with on_target_failure = "queue" waits; absent where nothing is kept (a test POST). */
  queue?: QueueSettings;
}
