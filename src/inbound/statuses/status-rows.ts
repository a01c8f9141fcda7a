// The incoming statuses of a transaction: one row per recipient of each address, for a
// message posted to its target or refused by Postroom itself, and the log line of each.
// Apart from post-message.ts: the pipeline decides, this turns its outcome into rows.
import type { LogFields, Logger } from "../../lib/logger.ts";
import { newId16 } from "../../lib/ids.ts";
import { replaceNulInFields } from "../../lib/stored-text.ts";
import { formatReply, type SmtpReply } from "../../smtp/reply.ts";
import type { TargetVerdict } from "../targets/target-reply.ts";
import type { AddressGroup, PostDeps, Transaction } from "../transaction.ts";
import type { IncomingStatus } from "./incoming-status.ts";

export function statusRow(
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
export function logStatuses(
  log: Logger,
  msg: string,
  rows: readonly IncomingStatus[],
  fields: LogFields,
  level: "info" | "warn" = "info",
): void {
  for (const r of rows) log[level](msg, { to: r.rcptTo, address_id: r.addressId, status_id: r.id, status: r.status, ...fields });
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
