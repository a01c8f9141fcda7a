// Recipient routing at RCPT time: the address behind an RCPT TO, or the reply that
// refuses it. Deleted addresses and domains are unknown at once (the repositories skip them).
import { reply, type SmtpReply } from "../lib/smtp-reply.ts";
import type { Address, AddressRepo } from "./addresses.repo.ts";
import type { BounceHandler } from "./bounce-hook.ts";
import { compileAuthRegex } from "./custom-domain.ts";
import type { CustomDomain, CustomDomainRepo } from "./custom-domains.repo.ts";
import { classifyRecipient } from "./recipients.ts";

export type Route = { kind: "address"; address: Address; customDomain: CustomDomain | null } | { kind: "bounce" };

export type RouteResult =
  | { ok: true; route: Route }
  /** `address` is set when the refusal concerns a known address, so it gets an incoming status. */
  | { ok: false; reply: SmtpReply; address: Address | null };

export const REFUSALS = {
  relay: reply(550, "5.7.1", "relay not permitted"),
  unknown: reply(550, "5.1.1", "no such recipient here"),
  regexp: reply(550, "5.1.1", "recipient does not match the regexp"),
  badAddress: reply(553, "5.1.3", "recipient address is not valid"),
};

export interface RouteDeps {
  inboundDomain: string;
  bounceHost: string;
  addresses: AddressRepo;
  customDomains: CustomDomainRepo;
  bounces: BounceHandler;
}

export async function routeRecipient(rcpt: string, deps: RouteDeps): Promise<RouteResult> {
  const kind = classifyRecipient(rcpt, { inboundDomain: deps.inboundDomain, bounceHost: deps.bounceHost });
  switch (kind.kind) {
    case "invalid":
      return { ok: false, reply: rcpt.toLowerCase().endsWith(`@${deps.inboundDomain}`) ? REFUSALS.unknown : REFUSALS.badAddress, address: null };
    case "bounce": {
      const refusal = await deps.bounces.checkRecipient(rcpt);
      return refusal ? { ok: false, reply: refusal, address: null } : { ok: true, route: { kind: "bounce" } };
    }
    case "address": {
      const address = await deps.addresses.findLive(kind.addressId);
      return address ? { ok: true, route: { kind: "address", address, customDomain: null } } : { ok: false, reply: REFUSALS.unknown, address: null };
    }
    case "domain": {
      const customDomain = await deps.customDomains.findLiveByDomain(kind.domain);
      if (!customDomain) return { ok: false, reply: REFUSALS.relay, address: null };
      const address = await deps.addresses.findLive(customDomain.addressId);
      if (!address) return { ok: false, reply: REFUSALS.unknown, address: null };
      if (customDomain.authRegex !== null && !compileAuthRegex(customDomain.authRegex).test(`${kind.localPart}@${kind.domain}`)) {
        return { ok: false, reply: REFUSALS.regexp, address };
      }
      return { ok: true, route: { kind: "address", address, customDomain } };
    }
  }
}
