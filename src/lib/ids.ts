// Identifiers are random, never sequential (docs/api.md, Identifiers), so they leak nothing
// about volume or order and cannot be guessed from one another.

/** `bytes` random bytes as lowercase hex (so 2 * bytes characters). */
export function randomHex(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return Buffer.from(buf).toString("hex");
}

/** Account, outbound account, custom domain and sending domain IDs: 16 hex. */
export const newId16 = (): string => randomHex(8);

/** Address IDs: 20 hex. */
export const newAddressId = (): string => randomHex(10);

/** Outbound message IDs: UUID v4. */
export const newUuid = (): string => crypto.randomUUID();

export const HEX16 = /^[0-9a-f]{16}$/;
export const HEX20 = /^[0-9a-f]{20}$/;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
