// The end of DATA: put our trace lines in front of the message, parse it once, check
// SPF/DKIM/DMARC, then POST it to the target of every address it reached (in parallel),
// record an incoming status for each, and answer the sender with the worst of the
// replies (docs/receiving.md). The steps live beside it: the types shared by them in
// transaction.ts, the posting to one address in targets/address-post.ts, the status rows
// in statuses/status-rows.ts.
import { createHash } from "node:crypto";
import type { MessageCost } from "../lib/memory-budget.ts";
import { SMTP_REPLIES } from "../smtp/replies.ts";
import { formatReply, type SmtpReply } from "../smtp/reply.ts";
import { recipientsOfAccount } from "./addresses/recipients.ts";
import type { AuthChecks, AuthSession } from "./parse/auth-checks.ts";
import type { Examined } from "./parse/examine.ts";
import type { ExtractedMessage } from "./parse/extract.ts";
import { MessageRefused } from "./parse/parse.ts";
import type { SpamdResult } from "./parse/spamd.ts";
import { receivedHeader, returnPathHeader, withTraceHeaders } from "./parse/trace-headers.ts";
import type { PayloadEnvelope } from "./payload/payload.ts";
import { type IncomingStatus, stateOf } from "./statuses/incoming-status.ts";
import { recordAnswered } from "./statuses/status-retry.ts";
import { logStatuses, recordRefusal, statusRow } from "./statuses/status-rows.ts";
import { keepForLater } from "./queue/keep-for-later.ts";
import { spamDecision, spamResponse, targetFailed } from "./queue/queue-decisions.ts";
import { postToAddress } from "./targets/address-post.ts";
import { outcomeLine } from "./targets/outcome-log.ts";
import { verdictFor, worstReply } from "./targets/target-reply.ts";
import type { AddressGroup, PostDeps, Transaction } from "./transaction.ts";

// PostDeps is imported from here by the app's wiring; it is declared with the other shared types.
export type { PostDeps } from "./transaction.ts";

export const md5Hex = (raw: Buffer) => createHash("md5").update(raw).digest("hex");

/** Stable for the same message bytes and address, so a target can drop a redelivery. */
export const messageKey = (md5: string, addressId: string): string =>
  createHash("sha256").update(`${md5}:${addressId}`).digest("hex").slice(0, 32);

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
  /** Our Return-Path and Received lines, kept with a message that waits for its target. */
  trace: string;
}

/** The message to each address it reached, in parallel; one reply per address, the statuses of all stored together. */
async function postToAddresses(raw: Buffer, tx: Transaction, deps: PostDeps, frontRoom: number): Promise<SmtpReply[]> {
  const md5 = md5Hex(raw);
  const trace = traceLines(tx, tx.id, deps.hostname, deps.clock.nowMs());
  const session = { mailFrom: tx.mailFrom, helo: tx.helo, remoteIp: tx.remoteIp, mta: deps.hostname };
  const examined = await examineOrRefuse(raw, trace, session, tx, deps, frontRoom, md5);
  if ("refusal" in examined) return [examined.refusal];
  // spamd scores the message as the sender sent it (it never waits past inbound.spamd.timeout).
  const spamd = await (deps.spamd?.(raw) ?? null);
  const checked: Checked = { extracted: examined.extracted, md5, auth: examined.auth, spamd, trace };
  const results = await Promise.all(tx.groups.map((group) => postToGroup(group, raw, tx, checked, deps)));
  // Never turned into the reply: the targets have answered (status-retry.ts).
  await recordAnswered(
    results.flatMap((r) => r.rows),
    deps,
    tx.log,
  );
  return results.map((r) => r.reply);
}

/** Parses the message behind our trace lines and checks its sender; a message that cannot be read is refused and recorded. */
async function examineOrRefuse(
  raw: Buffer,
  trace: string,
  session: AuthSession,
  tx: Transaction,
  deps: PostDeps,
  frontRoom: number,
  md5: string,
): Promise<Examined | { refusal: SmtpReply }> {
  try {
    return await deps.examine(withTraceHeaders(raw, trace, frontRoom), deps.limits, Buffer.byteLength(trace), session);
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
  const facts = { messageId: extracted.messageId, subject: extracted.subject, size: raw.length };
  const nowMs = deps.clock.nowMs();
  // (beyond) spam_threshold: refused before any POST, the score in the reply.
  const spam = spamDecision(group.address.spamThreshold ?? null, checked.spamd, deps.spamd !== null);
  if (spam && "refuse" in spam) {
    const v = { status: "rejected", category: "rejected" as const, response: null, reply: spam.refuse };
    const rows = statusRow(group, tx, v, { ...facts, postroomMessageId: null }, nowMs).map((r) => ({
      ...r,
      state: "rejected" as const,
      attempts: 0,
    }));
    logStatuses(
      tx.log,
      "inbound message refused as spam",
      rows,
      { reply: formatReply(spam.refuse), spamd_score: checked.spamd?.score, md5 },
      "warn",
    );
    return { reply: spam.refuse, rows };
  }
  const envelope = envelopeFor(group, tx, checked);
  const outcome = await postToAddress(group, extracted.content, envelope, key, raw, deps, tx.log);
  let verdict = verdictFor(outcome);
  let rows = statusRow(
    group,
    tx,
    verdict,
    { ...facts, postroomMessageId: key, storeUrl: outcome.storeUrl ?? null, envelope: outcome.envelope ?? null },
    nowMs,
  );
  let state = stateOf({ statusCategory: verdict.category });
  let nextAttemptAtMs: number | null = null;
  // (beyond) on_target_failure = "queue": kept durably, then 250; the worker posts it again (queue-worker.ts).
  if (group.address.onTargetFailure === "queue" && deps.queue && targetFailed(outcome)) {
    const toKeep = {
      accountId: group.address.accountId,
      addressId: group.address.id,
      statusIds: rows.map((r) => r.id),
      facts: {
        mailFrom: tx.mailFrom,
        helo: tx.helo,
        ehlo: tx.ehlo,
        remoteIp: tx.remoteIp,
        tls: tx.tls,
        rcpts: group.rcpts,
        trace: checked.trace,
        customDomain: group.customDomain?.domain ?? null,
        envelope,
        messageId: extracted.messageId,
        subject: extracted.subject,
        postroomMessageId: key,
      },
      raw,
      lastResponse: rows[0]?.response ?? null,
      nowMs,
    };
    nextAttemptAtMs = await keepForLater(toKeep, deps.queue, tx.log);
    if (nextAttemptAtMs !== null) {
      verdict = { ...verdict, reply: SMTP_REPLIES.acceptedQueued };
      state = "queued";
    }
  }
  const note = spam ? spamResponse(spam) : null;
  rows = rows.map((r) => ({
    ...r,
    state,
    attempts: 1,
    nextAttemptAtMs,
    response: note ? (r.response ? `${r.response}; ${note}` : note) : r.response,
  }));
  const line = outcomeLine(verdict);
  const reason = outcome.kind === "unreachable" ? { reason: outcome.reason } : {};
  logStatuses(
    tx.log,
    line.msg,
    rows,
    { message_id_header: extracted.messageId, reply: formatReply(verdict.reply), ...reason, md5, x_postroom_message_id: key, state },
    line.level,
  );
  return { reply: verdict.reply, rows };
}
