// E12's search terms of issue 34: `status:scheduled` (a message whose send_at is still
// ahead of its recipients) and `metadata.<key>:<value>` (one metadata value, exactly).
// The parser (lib/search-query.ts) accepts a field `metadata.<key>` when the list of known
// fields names METADATA_FIELD; the key keeps its case, as metadata keys do.

/** The status a search names for messages waiting for their send_at (no lifecycle kind). */
export const SCHEDULED = "scheduled";

/** Written in a list of search fields: `metadata.<key>` is known. */
export const METADATA_FIELD = "metadata.*";

/** A metadata key as E11 allows it (API.md section 10). */
export const METADATA_KEY = /^[A-Za-z0-9_]{1,40}$/;

/** The key a `metadata.<key>` field names, or null for any other field (or a key E11 would refuse). */
export function metadataKeyOf(field: string | null): string | null {
  if (field === null || !field.startsWith("metadata.")) return null;
  const key = field.slice("metadata.".length);
  return METADATA_KEY.test(key) ? key : null;
}
