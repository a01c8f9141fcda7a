// Recipient routing at RCPT time: the address behind an RCPT TO, or the reply that
// refuses it. Deleted addresses and domains are unknown at once (the repositories skip them).
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import type { SmtpReply } from "../../smtp/reply.ts";
import type { SmtpRefusalReason } from "../../metrics/labels.ts";
import type { AddressRepo } from "./addresses.port.ts";
import type { Address } from "./address.ts";
import type { BounceHandler } from "../../outbound/bounces/bounce-hook.ts";
import { compileAuthRegex, type CustomDomain } from "./custom-domain.ts";
import type { CustomDomainRepo } from "./custom-domains.port.ts";
import { classifyRecipient } from "./recipients.ts";

export type Route = { kind: "address"; address: Address; customDomain: CustomDomain | null } | { kind: "bounce" };

export type RouteResult =
  | { ok: true; route: Route }
  /** `address` is set when the refusal concerns a known address, so it gets an incoming status. */
  | { ok: false; reply: SmtpReply; address: Address | null; reason: SmtpRefusalReason };

export interface RouteDeps {
  inboundDomain: string;
  bounceHost: string;
  addresses: AddressRepo;
  customDomains: CustomDomainRepo;
  bounces: BounceHandler;
  /** Whether the address's account is unknown (deleted) or suspended: its mail is refused. */
  accountStanding(accountId: string): "ok" | "unknown" | "suspended";
}

/** An address is taken only while its account is known and not suspended. */
function standingRefusal(address: Address, deps: RouteDeps): RouteResult | null {
  const standing = deps.accountStanding(address.accountId);
  if (standing === "ok") return null;
  return standing === "suspended"
    ? { ok: false, reply: SMTP_REPLIES.recipientSuspended, address, reason: "account_suspended" }
    : { ok: false, reply: SMTP_REPLIES.noSuchRecipient, address: null, reason: "unknown_recipient" };
}

export async function routeRecipient(rcpt: string, deps: RouteDeps): Promise<RouteResult> {
  const kind = classifyRecipient(rcpt, { inboundDomain: deps.inboundDomain, bounceHost: deps.bounceHost });
  switch (kind.kind) {
    case "invalid":
      return rcpt.toLowerCase().endsWith(`@${deps.inboundDomain}`)
        ? { ok: false, reply: SMTP_REPLIES.noSuchRecipient, address: null, reason: "unknown_recipient" }
        : { ok: false, reply: SMTP_REPLIES.invalidRecipient, address: null, reason: "invalid_address" };
    case "bounce": {
      const refusal = await deps.bounces.checkRecipient(rcpt);
      return refusal ? { ok: false, reply: refusal, address: null, reason: "bounce_recipient" } : { ok: true, route: { kind: "bounce" } };
    }
    case "address": {
      const address = await deps.addresses.findLive(kind.addressId);
      if (!address) return { ok: false, reply: SMTP_REPLIES.noSuchRecipient, address: null, reason: "unknown_recipient" };
      return standingRefusal(address, deps) ?? { ok: true, route: { kind: "address", address, customDomain: null } };
    }
    case "domain": {
      const customDomain = await deps.customDomains.findLiveByDomain(kind.domain);
      if (!customDomain) return { ok: false, reply: SMTP_REPLIES.relayNotPermitted, address: null, reason: "relay_denied" };
      const address = await deps.addresses.findLive(customDomain.addressId);
      if (!address) return { ok: false, reply: SMTP_REPLIES.noSuchRecipient, address: null, reason: "unknown_recipient" };
      const refusal = standingRefusal(address, deps);
      if (refusal) return refusal;
      if (customDomain.authRegex !== null && !compileAuthRegex(customDomain.authRegex).test(`${kind.localPart}@${kind.domain}`)) {
        return { ok: false, reply: SMTP_REPLIES.regexpMismatch, address, reason: "regexp_mismatch" };
      }
      return { ok: true, route: { kind: "address", address, customDomain } };
    }
  }
}
