// A recipient's copy as it leaves: personalised when the message tracks or carries
// List-Unsubscribe, then DKIM-signed (signing comes last, over the final bytes).
import { isStoreUnreachable } from "../../lib/store-unreachable.ts";
import { bounceAddress } from "../bounces/bounce-address.ts";
import { senderDomainOf } from "../compose/addresses.ts";
import type { ClaimedRecipient, OutboundMessage } from "../queue/message.ts";
import type { OutboundRepo } from "../queue/queue.port.ts";
import { UnsendableMessage } from "./outcome.ts";
import { needsPersonalizing, personalize } from "../tracking/personalize.ts";
import { splitMessage } from "../compose/raw-headers.ts";
import type { SenderDomains } from "../sending/sender-domains.ts";

export function copyPreparer(deps: {
  domains: SenderDomains;
  publicUrl: () => string;
  trackingKey: Buffer;
  trackingLinkTtlMs: () => number;
}) {
  return {
    samePerRecipient: (m: OutboundMessage) => !needsPersonalizing(m.tracking),
    async prepare(m: OutboundMessage, recipientId: string, recipient: string, raw: Buffer): Promise<Buffer> {
      const copy = needsPersonalizing(m.tracking)
        ? await personalize(raw, m.tracking, {
            publicUrl: deps.publicUrl(),
            key: deps.trackingKey,
            messageId: m.id,
            outboundAccountId: m.outboundAccountId,
            recipientId,
            recipient,
            linkExpiresAtMs: m.createdAtMs + deps.trackingLinkTtlMs(),
          })
        : raw;
      // RFC 6376 makes From the one header a signature must cover. Only a message accepted
      // before From was required can lack it: it can never be signed, so never sent.
      if (!splitMessage(copy).headers.has("from"))
        throw new UnsendableMessage("the message has no From header, so it cannot be DKIM-signed; send it again with one");
      return deps.domains.sign(m.accountId, senderDomainOf(m.from), copy);
    },
  };
}

/** What copyFor needs: the stored message, and copyPreparer's two functions. */
export interface CopyDeps {
  repo: Pick<OutboundRepo, "rawMessage">;
  samePerRecipient(message: OutboundMessage): boolean;
  prepare(message: OutboundMessage, recipientId: string, recipient: string, raw: Buffer): Promise<Buffer>;
}

/** The store did not answer for a message's bytes or what its copy needs: no fault of the message, and no attempt made. */
export class StoredCopyUnread extends Error {
  override name = "StoredCopyUnread";
}

/**
 * The bytes for one recipient; read and prepared once per message (in `cache`) when all
 * copies are alike. A failed read of the store, or a store away while preparing, throws
 * StoredCopyUnread.
 */
export async function copyFor(item: ClaimedRecipient, cache: Map<string, Buffer>, deps: CopyDeps): Promise<Buffer> {
  const { message, recipient } = item;
  const shared = deps.samePerRecipient(message);
  const cached = shared ? cache.get(message.id) : undefined;
  if (cached) return cached;
  const stored = await deps.repo.rawMessage(message.id).catch((cause) => {
    throw new StoredCopyUnread("the message's stored bytes could not be read", { cause });
  });
  if (!stored) throw new UnsendableMessage("the message's stored bytes are missing, so it cannot be sent");
  // The bytes may come from the claim (PostgreSQL) while the store is away: then preparing
  // the copy (the sending domain's DKIM key, tracking) is where its absence shows.
  const raw = await deps.prepare(message, recipient.id, recipient.email, stored).catch((cause) => {
    throw isStoreUnreachable(cause) ? new StoredCopyUnread("the store could not be read to prepare the message's copy", { cause }) : cause;
  });
  if (shared) cache.set(message.id, raw);
  return raw;
}

/** The envelope sender of a recipient's copy: bounces come back to it and name the recipient. */
export function envelopeSender(message: OutboundMessage, recipientId: string): string {
  return bounceAddress(message.id, recipientId, senderDomainOf(message.from));
}
