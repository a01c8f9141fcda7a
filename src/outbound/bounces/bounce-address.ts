// Our bounce addresses, bounces+<message UUID>-<recipient ID>@mta.<sending domain>: the
// envelope sender of each recipient's copy (delivery/worker.ts), so that a bounce names the
// message and recipient it is about. The inbound listener routes mail for this shape to the
// bounce handler (src/inbound/addresses/recipients.ts), which reads the IDs back (bounce-handler.ts).
// Pure, table-tested.

const PREFIX = "bounces+";
const MESSAGE_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** As we write it: the recipient ID is 16 hex digits (newId16). */
const WRITTEN = new RegExp(`^bounces\\+(${MESSAGE_UUID})-([0-9a-f]{16})$`);
/**
 * What is routed to the bounce handler at RCPT: any recipient token, so that an address we
 * never wrote is refused there as an unknown bounce address.
 */
const SHAPE = new RegExp(`^bounces\\+${MESSAGE_UUID}-[0-9a-z]{1,64}$`);

/** The bounce address of a recipient's copy of a message sent from `senderDomain`. */
export function bounceAddress(messageId: string, recipientId: string, senderDomain: string): string {
  return `${PREFIX}${messageId}-${recipientId}@mta.${senderDomain}`;
}

/** The message and recipient a bounce address names (any case), or null when it is not one we write. */
export function parseBounceAddress(address: string): { messageId: string; recipientId: string } | null {
  const at = address.indexOf("@");
  if (at < 0) return null;
  const m = WRITTEN.exec(address.slice(0, at).toLowerCase());
  return m ? { messageId: m[1]!, recipientId: m[2]! } : null;
}

/** Whether a lower-case local part has the shape of a bounce address (to be routed to the bounce handler). */
export const isBounceLocalPart = (localPart: string): boolean => SHAPE.test(localPart);
