// Values read back from PostgreSQL through Bun's SQL client, made what SQLite gives. Bun
// returns a BIGINT column (our milliseconds, sizes, counters) as a string, or as a bigint
// with the client's `bigint: true`, never as a number: a PostgreSQL repository converts
// each such column with pgInteger, so callers and tests see the same numbers as on SQLite.

export class PgValueError extends Error {
  override name = "PgValueError";
}

const INTEGER_TEXT = /^-?\d+$/;

/**
 * A BIGINT (or INTEGER) column as a JavaScript number. Refuses what a number cannot hold
 * exactly (beyond 2^53 - 1) instead of rounding it: milliseconds and counts never get there.
 */
export function pgInteger(value: unknown, column: string): number {
  // A string must be all digits: Number("") and Number(" ") are 0.
  const n =
    typeof value === "number"
      ? value
      : typeof value === "bigint"
        ? Number(value)
        : typeof value === "string" && INTEGER_TEXT.test(value)
          ? Number(value)
          : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new PgValueError(`${column}: ${String(value)} is not an integer a number holds exactly`);
  return n;
}

/** A 0/1 flag column (kept INTEGER on both engines, schema-parity) as a boolean. */
export const pgFlag = (value: unknown, column: string): boolean => pgInteger(value, column) === 1;
