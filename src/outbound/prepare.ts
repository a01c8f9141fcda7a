// A recipient's copy as it leaves: personalised when the message tracks or carries
// List-Unsubscribe, then DKIM-signed (signing comes last, over the final bytes).
import { domainOf, parseAddressList } from "./addresses.ts";
import type { OutboundMessage } from "./outbound.repo.ts";
import { needsPersonalizing, personalize } from "./personalize.ts";
import type { SenderDomains } from "./signing.ts";

export function copyPreparer(deps: { domains: SenderDomains; publicUrl: () => string; trackingKey: Buffer }) {
  return {
    samePerRecipient: (m: OutboundMessage) => !needsPersonalizing(m.tracking),
    async prepare(m: OutboundMessage, recipientId: string, recipient: string, raw: Buffer): Promise<Buffer> {
      const copy = needsPersonalizing(m.tracking)
        ? await personalize(raw, m.tracking, { publicUrl: deps.publicUrl(), key: deps.trackingKey, messageId: m.id, recipientId, recipient })
        : raw;
      const from = parseAddressList(m.from)[0]?.address ?? m.from;
      return deps.domains.sign(m.accountId, domainOf(from), copy);
    },
  };
}
