// The sending-domains side of SenderDomains (src/outbound/sending/sender-domains.ts): mail goes out only
// from a verified domain of the account (or a parent of it), signed with its key. Test
// mode only needs the domain to exist.
import type { SenderDomains } from "../outbound/sending/sender-domains.ts";
import type { DomainService } from "./service.ts";
import { unknownSendingDomain, unverifiedDomain } from "../http/refusals.ts";

export function senderDomains(service: DomainService): SenderDomains {
  return {
    async refusal(accountId, fromDomain, testMode) {
      const d = await service.domainFor(accountId, fromDomain);
      if (!d) return unknownSendingDomain(fromDomain, accountId);
      if (testMode || service.status(d) !== "unverified") return null;
      return unverifiedDomain(fromDomain, accountId, d.id);
    },
    async sign(accountId, fromDomain, raw) {
      const d = await service.domainFor(accountId, fromDomain);
      // The refusal check ran when the message was accepted; a domain deleted since then sends unsigned.
      return d ? service.sign(d, raw) : raw;
    },
  };
}
