// The end of DATA: put our trace lines in front of the message, parse it once, check
// SPF/DKIM/DMARC, then POST it to the target of every address it reached (in parallel),
// record an incoming status for each, and answer the sender with the worst of the
// replies (docs/receiving.md).
import type { SpamdResult } from "./parse/spamd.ts";
import { createHash } from "node:crypto";
import type { Clock } from "../lib/clock.ts";
import { isDiskFull, type DiskFullLog } from "../lib/disk-full.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { newId16 } from "../lib/ids.ts";
import { replaceNulInFields } from "../lib/stored-text.ts";
import type { LogFields, Logger } from "../lib/logger.ts";
import type { MessageCost } from "../lib/memory-budget.ts";
import { SMTP_REPLIES } from "../smtp/replies.ts";
import { formatReply, type SmtpReply } from "../smtp/reply.ts";
import type { Address } from "./addresses/address.ts";
import { uploadToS3 } from "./attachments/attachment-s3.ts";
import type { AuthChecker, AuthChecks } from "./parse/auth-checks.ts";
import type { BounceHandler } from "./bounce-hook.ts";
import type { CustomDomain } from "./addresses/custom-domain.ts";
import type { ExtractedMessage } from "./parse/extract.ts";
import { MessageRefused, type ParseLimits } from "./parse/parse.ts";
import type { MessageAttachment, MessageContent, PayloadEnvelope } from "./payload/payload.ts";
import { recipientsOfAccount, type AcceptedRecipient } from "./addresses/recipients.ts";
import type { StatusRepo } from "./statuses/statuses.port.ts";
import { recordAnswered, type StatusRetry } from "./statuses/status-retry.ts";
import type { IncomingStatus } from "./statuses/incoming-status.ts";
import type { LocalAttachments } from "./attachments/local-attachments.port.ts";
import { targetBody } from "./targets/target-body.ts";
import { postToTarget, type TargetPostContext } from "./targets/target-post.ts";
import { verdictFor, worstReply, type TargetOutcome, type TargetVerdict } from "./targets/target-reply.ts";
import { receivedHeader, returnPathHeader, withTraceHeaders } from "./parse/trace-headers.ts";

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
}

export const md5Hex = (raw: Buffer) => createHash("md5").update(raw).digest("hex");

/** Stable for the same message bytes and address, so a target can drop a redelivery. */
export const messageKey = (md5: string, addressId: string): string =>
  createHash("sha256").update(`${md5}:${addressId}`).digest("hex").slice(0, 32);

function statusRow(
  group: AddressGroup,
  tx: Transaction,
  v: Pick<TargetVerdict, "status" | "category" | "response" | "reply">,
  extra: {
    messageId: string | null;
    subject: string | null;
    size: number;
    postroomMessageId: string | null;
    storeUrl?: string | null;
    envelope?: string | null;
  },
  nowMs: number,
): IncomingStatus[] {
  // The header fields of a message come as the sender wrote them, NUL included: recorded
  // with U+FFFD in its place (src/lib/stored-text.ts), never refused after the target has it.
  return group.rcpts.map((rcpt) =>
    replaceNulInFields<IncomingStatus>({
      id: newId16(),
      accountId: group.address.accountId,
      addressId: group.address.id,
      messageId: extra.messageId,
      mailFrom: tx.mailFrom,
      rcptTo: rcpt,
      subject: extra.subject,
      status: v.status,
      statusCategory: v.category,
      tls: tx.tls?.protocol ?? null,
      sizeBytes: extra.size,
      remoteIp: tx.remoteIp,
      response: v.response ?? (v.category === "successful" ? null : formatReply(v.reply)),
      postroomMessageId: extra.postroomMessageId,
      storeUrl: extra.storeUrl ?? null,
      envelope: extra.envelope ?? null,
      createdAtMs: nowMs,
    }),
  );
}

/** Records refusals Postroom made itself (size, limits, regexp) for addresses it knows. */
function refusedStatuses(
  groups: readonly AddressGroup[],
  tx: Transaction,
  refusal: SmtpReply,
  size: number | null,
  nowMs: number,
): IncomingStatus[] {
  return groups.flatMap((g) =>
    statusRow(
      g,
      tx,
      { status: "rejected", category: "rejected", response: null, reply: refusal },
      { messageId: null, subject: null, size: size ?? 0, postroomMessageId: null },
      nowMs,
    ).map((r) => ({ ...r, sizeBytes: size })),
  );
}

/** One line per recipient with its incoming status (E6's id as status_id). */
function logStatuses(log: Logger, msg: string, rows: readonly IncomingStatus[], fields: LogFields): void {
  for (const r of rows) log.info(msg, { to: r.rcptTo, address_id: r.addressId, status_id: r.id, status: r.status, ...fields });
}

/**
 * A refusal Postroom made itself (size, regexp, an unparseable message): an incoming status
 * for each recipient of an address it knows, and a line `msg` for each with the reply sent.
 */
export async function recordRefusal(
  msg: string,
  groups: readonly AddressGroup[],
  tx: Transaction,
  refusal: SmtpReply,
  size: number | null,
  deps: Pick<PostDeps, "statuses" | "clock">,
): Promise<void> {
  const rows = refusedStatuses(groups, tx, refusal, size, deps.clock.nowMs());
  logStatuses(tx.log, msg, rows, { reply: formatReply(refusal) });
  await deps.statuses.record(rows);
}

/** `raw`: the message as the sender sent it (the raw and rfc822 formats post it). */
/** The target's outcome, and the stored message's URL when the address keeps messages. */
export async function postToAddress(
  group: AddressGroup,
  content: MessageContent,
  envelope: PayloadEnvelope,
  key: string,
  raw: Buffer,
  deps: PostDeps,
  log: Logger,
): Promise<TargetOutcome & { storeUrl?: string; envelope?: string }> {
  const store = group.address.attachments;
  // raw and rfc822 post the message itself: its attachments are not stored apart.
  const format = group.address.targetFormat;
  const apart = format === "raw" || format === "rfc822" ? [] : content.attachments;
  let urls: (string | null)[];
  try {
    urls = await Promise.all(apart.map((a) => (store.store === "local" || store.store === "s3" ? keep(group.address, a, deps) : null)));
    // (beyond) The message itself, kept where the address keeps attachments (locally when it keeps none).
    if (group.address.storeMessages) {
      const fileName = `${envelope.md5}.eml`;
      envelope = {
        ...envelope,
        store_url: await keep(
          group.address,
          { fileName, contentType: "message/rfc822", disposition: "attachment", contentId: null, content: raw },
          deps,
        ),
      };
    }
  } catch (err) {
    if (store.store === "s3") return { kind: "unreachable", reason: `attachment store failed: ${(err as Error).message}` };
    // Our own disk: the details (paths) go to the log, not to the sender or the status.
    const diskFull = isDiskFull(err);
    if (diskFull) deps.diskFull.report("local attachments", err);
    else log.error("local attachment store failed", { err, address_id: group.address.id });
    return { kind: "local_failure", diskFull };
  }
  const body = await targetBody({ format: group.address.targetFormat, content, envelope, urls, raw });
  const target = group.customDomain?.domainTarget ?? group.address.target;
  const outcome = await postToTarget(
    { target, body, messageKey: key, signingSecret: group.address.signingSecret, nowMs: deps.clock.nowMs() },
    deps.post,
  );
  // A kept message keeps its envelope too: with both, the payload posted can be shown again.
  return envelope.store_url ? { ...outcome, storeUrl: envelope.store_url, envelope: JSON.stringify(envelope) } : outcome;
}

/** Stores a file in the address's S3 store, or locally; returns its signed URL. */
function keep(address: Address, file: MessageAttachment, deps: PostDeps): Promise<string> {
  const store = address.attachments;
  if (store.store === "s3")
    return uploadToS3(store, file, {
      nowMs: deps.clock.nowMs(),
      ttlMs: deps.attachmentUrlTtlMs,
      resolver: deps.resolver,
      policy: deps.post.policy,
      timeoutMs: deps.post.timeoutMs,
    });
  // Its name and type are stored (and its name is in the URL): NUL replaced (stored-text.ts).
  return deps.localAttachments.save(replaceNulInFields(file), deps.clock.nowMs(), deps.attachmentUrlTtlMs);
}

/** The Return-Path and Received lines of this transaction (RFC 5321 section 4.4), in that order. */
function traceLines(tx: Transaction, id: string, hostname: string, nowMs: number): string {
  const received = receivedHeader({
    helo: tx.helo,
    remoteIp: tx.remoteIp,
    ehlo: tx.ehlo,
    tls: tx.tls,
    authenticated: tx.authenticated,
    hostname,
    id,
    recipients: tx.accepted.map((r) => r.rcpt),
    nowMs,
  });
  return returnPathHeader(tx.mailFrom) + received;
}

/**
 * What a received message holds at its peak while it is parsed and posted, as a multiple of
 * its size (measured with bench:memory, bench/RESULTS.md): its raw bytes, what parsing
 * leaves behind until the garbage collector runs, the decoded attachments, the body being
 * posted. A worker thread parses a copy of the message, held until the worker collects it.
 */
export function inboundMessageCost(parseWorkers: number): MessageCost {
  return { copies: 4 + (parseWorkers > 0 ? 1 : 0), fixedBytes: 256 * 1024 };
}

/** Room kept in front of a received message for our trace lines, so adding them copies nothing. */
export const TRACE_ROOM_BYTES = 8192;

/**
 * The end of DATA for one transaction: the message to every address it reached, and to
 * the bounce handler for bounces of ours; the worst of the replies goes to the sender.
 * `frontRoom`: bytes of `raw`'s buffer right in front of it that are ours to write (the
 * listener keeps TRACE_ROOM_BYTES there), so the trace lines go in without a copy.
 */
export async function postMessage(raw: Buffer, tx: Transaction, deps: PostDeps, frontRoom = 0): Promise<SmtpReply> {
  const replies: SmtpReply[] = [];
  if (tx.groups.length > 0) replies.push(...(await postToAddresses(raw, tx, deps, frontRoom)));
  if (tx.bounceRcpts.length > 0) {
    replies.push(await deps.bounces.receive(raw, { mailFrom: tx.mailFrom, rcptTo: tx.bounceRcpts, remoteIp: tx.remoteIp }));
  }
  return worstReply(replies);
}

/** What every address reached by the message shares: its content, and the checks of its sender. */
interface Checked {
  extracted: ExtractedMessage;
  /** Of the message as the sender sent it: our lines differ at every posting, and a target drops a redelivery by the key made from it. */
  md5: string;
  auth: AuthChecks;
  spamd: SpamdResult | null;
}

/** The message to each address it reached, in parallel; one reply per address, the statuses of all stored together. */
async function postToAddresses(raw: Buffer, tx: Transaction, deps: PostDeps, frontRoom: number): Promise<SmtpReply[]> {
  const md5 = md5Hex(raw);
  const extracted = await extractOrRefuse(raw, tx, deps, frontRoom, md5);
  if ("refusal" in extracted) return [extracted.refusal];
  // DKIM is verified on the message as sent: a signature may cover a Return-Path we replaced.
  // spamd scores the message as the sender sent it too, at the same time (it never waits past inbound.spamd.timeout).
  const [auth, spamd] = await Promise.all([
    deps.auth.check(raw, { mailFrom: tx.mailFrom, helo: tx.helo, remoteIp: tx.remoteIp, mta: deps.hostname }, extracted.facts),
    deps.spamd?.(raw) ?? null,
  ]);
  const checked: Checked = { extracted, md5, auth, spamd };
  const results = await Promise.all(tx.groups.map((group) => postToGroup(group, raw, tx, checked, deps)));
  // Never turned into the reply: the targets have answered (status-retry.ts).
  await recordAnswered(
    results.flatMap((r) => r.rows),
    deps,
    tx.log,
  );
  return results.map((r) => r.reply);
}

/** Parses the message behind our trace lines; a message that cannot be read is refused and recorded. */
async function extractOrRefuse(
  raw: Buffer,
  tx: Transaction,
  deps: PostDeps,
  frontRoom: number,
  md5: string,
): Promise<ExtractedMessage | { refusal: SmtpReply }> {
  const trace = traceLines(tx, tx.id, deps.hostname, deps.clock.nowMs());
  try {
    return await deps.extract(withTraceHeaders(raw, trace, frontRoom), deps.limits, Buffer.byteLength(trace));
  } catch (err) {
    const refusal = err instanceof MessageRefused ? err.reply : SMTP_REPLIES.unprocessable;
    if (!(err instanceof MessageRefused)) tx.log.error("inbound message failed to parse", { err, md5 });
    await recordRefusal("inbound message refused", tx.groups, tx, refusal, raw.length, deps);
    return { refusal };
  }
}

/** The envelope of the payload to one address (docs/receiving.md, envelope). */
function envelopeFor(group: AddressGroup, tx: Transaction, checked: Checked): PayloadEnvelope {
  const { md5, auth, spamd } = checked;
  return {
    to: group.rcpts[0]!,
    recipients: recipientsOfAccount(tx.accepted, group.address.accountId),
    from: tx.mailFrom,
    helo_domain: tx.helo,
    remote_ip: tx.remoteIp,
    spf: auth.spf,
    tls: tx.tls !== null,
    // The protocol, as the hosted service fills it (`TLSv1.3`); the cipher is in our Received line.
    tls_cipher: tx.tls?.protocol ?? null,
    md5,
    dkim: auth.dkim,
    dmarc: auth.dmarc,
    ...(spamd ? { spamd } : {}),
  };
}

/** POSTs to one address's target: the reply its answer gives, and a status per recipient, logged. */
async function postToGroup(
  group: AddressGroup,
  raw: Buffer,
  tx: Transaction,
  checked: Checked,
  deps: PostDeps,
): Promise<{ reply: SmtpReply; rows: IncomingStatus[] }> {
  const { extracted, md5 } = checked;
  // Sent to the target as X-Postroom-Message-Id: the log ties it to the statuses' ids.
  const key = messageKey(md5, group.address.id);
  const outcome = await postToAddress(group, extracted.content, envelopeFor(group, tx, checked), key, raw, deps, tx.log);
  const verdict = verdictFor(outcome);
  const rows = statusRow(
    group,
    tx,
    verdict,
    {
      messageId: extracted.messageId,
      subject: extracted.subject,
      size: raw.length,
      postroomMessageId: key,
      storeUrl: outcome.storeUrl ?? null,
      envelope: outcome.envelope ?? null,
    },
    deps.clock.nowMs(),
  );
  logStatuses(tx.log, "inbound delivered", rows, {
    message_id_header: extracted.messageId,
    reply: formatReply(verdict.reply),
    md5,
    x_postroom_message_id: key,
  });
  return { reply: verdict.reply, rows };
}
