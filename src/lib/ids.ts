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
