// The sending-domains side of SenderDomains (src/outbound/sending/sender-domains.ts): mail goes out only
// from a verified domain of the account (or a parent of it), signed with its key. Test
// mode only needs the domain to exist.
import type { SenderDomains } from "../outbound/sending/sender-domains.ts";
import type { DomainService } from "./service.ts";

export function senderDomains(service: DomainService): SenderDomains {
  return {
    async refusal(accountId, fromDomain, testMode) {
      const d = await service.domainFor(accountId, fromDomain);
      if (!d) return `domain ${fromDomain} is not a sending domain of this account`;
      if (testMode || service.status(d) !== "unverified") return null;
      return `domain ${fromDomain} is not verified`;
    },
    async sign(accountId, fromDomain, raw) {
      const d = await service.domainFor(accountId, fromDomain);
      // The refusal check ran when the message was accepted; a domain deleted since then sends unsigned.
      return d ? service.sign(d, raw) : raw;
    },
  };
}
