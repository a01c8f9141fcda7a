// A recipient an outbound account no longer sends to, and why: the suppression list's noun,
// apart from its SQL (suppressions.repo.ts).

export type SuppressionReason = "bounce" | "complaint" | "manual";

export interface Suppression {
  id: string;
  accountId: string;
  outboundAccountId: string;
  email: string;
  reason: SuppressionReason;
  details: Record<string, unknown>;
  createdAtMs: number;
  /** When the entry stops applying (a hard bounce's, outbound.suppression_ttl later); null: never (complaints, manual entries). */
  expiresAtMs: number | null;
}

/** What a suppression list entry an event makes: a hard bounce for a while, a complaint for good. */
export interface SuppressionOrder {
  reason: SuppressionReason;
  expiresAtMs: number | null;
}

/** The entry `order` makes for a sent message's recipient (its row: the message's accounts, the address folded). */
export function suppressionEntry(
  row: { account_id: string; outbound_account_id: string; email: string },
  order: SuppressionOrder,
  details: Record<string, unknown>,
  nowMs: number,
): Omit<Suppression, "id"> {
  return {
    accountId: row.account_id,
    outboundAccountId: row.outbound_account_id,
    email: row.email,
    reason: order.reason,
    details,
    createdAtMs: nowMs,
    expiresAtMs: order.expiresAtMs,
  };
}

/**
 * Whether an event suppresses its address, and until when: only a `bounce` whose class is
 * `hard` (the address or domain does not exist), for `ttlMs`, and a complaint, for good. A
 * block, a full mailbox, a DMARC rejection or a rate limit says nothing against the address.
 */
export function suppressionFor(
  event: { kind: string; details: Record<string, unknown>; createdAtMs: number },
  ttlMs: number,
): SuppressionOrder | null {
  if (event.kind === "complaint") return { reason: "complaint", expiresAtMs: null };
  if (event.kind === "bounce" && event.details.bounce_class === "hard") return { reason: "bounce", expiresAtMs: event.createdAtMs + ttlMs };
  return null;
}
