// Which kind of recipient an RCPT TO names, from the address alone (pure; table-tested).
// The lookups that follow (does the address exist, does the domain belong to someone)
// happen in route.ts.
import { isBounceLocalPart } from "../../outbound/bounces/bounce-address.ts";

export type RecipientKind =
  | { kind: "address"; addressId: string }
  | { kind: "bounce"; localPart: string; domain: string }
  | { kind: "domain"; localPart: string; domain: string }
  | { kind: "invalid" };

const ADDRESS_ID = /^[0-9a-f]{20}$/;

export function splitAddress(address: string): { localPart: string; domain: string } | null {
  const at = address.lastIndexOf("@");
  if (at <= 0 || at === address.length - 1) return null;
  return {
    localPart: address.slice(0, at),
    domain: address
      .slice(at + 1)
      .toLowerCase()
      .replace(/\.$/, ""),
  };
}

export function classifyRecipient(address: string, own: { inboundDomain: string; bounceHost: string }): RecipientKind {
  const parts = splitAddress(address);
  if (!parts) return { kind: "invalid" };
  const { localPart, domain } = parts;
  const lower = localPart.toLowerCase();
  // Bounces come back to mta.<sending domain>, a CNAME of the bounce host, or to the host itself.
  if (isBounceLocalPart(lower) && (domain === own.bounceHost || domain.startsWith("mta.")))
    return { kind: "bounce", localPart: lower, domain };
  if (domain === own.inboundDomain) {
    // Sub-addressing: <id>+anything reaches <id>.
    const id = lower.split("+", 1)[0]!;
    return ADDRESS_ID.test(id) ? { kind: "address", addressId: id } : { kind: "invalid" };
  }
  return { kind: "domain", localPart, domain };
}

/** A recipient the transaction accepted, with the account it reached (null for a bounce address). */
export interface AcceptedRecipient {
  rcpt: string;
  accountId: string | null;
}

/**
 * envelope.recipients of a POST for an address of `accountId`: every accepted recipient
 * of the transaction that reached that account (any of its addresses, sub-addresses or
 * custom domains), in RCPT order. Another account's recipients are never listed: they are
 * another tenant's business.
 */
export function recipientsOfAccount(accepted: readonly AcceptedRecipient[], accountId: string): string[] {
  return accepted.filter((r) => r.accountId === accountId).map((r) => r.rcpt);
}
