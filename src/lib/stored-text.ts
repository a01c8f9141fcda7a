// NUL (U+0000) and the store. PostgreSQL's text type cannot hold it (the insert fails);
// SQLite stores it, and C strings, log readers and terminals cut the text there. So no
// NUL reaches either store: what a caller sends us is refused at the API (text-checks.ts
// for bodies, parameter-checks.ts for the URL), and what we must accept as it comes, the
// header fields of a received message we record in its incoming status, has each NUL
// replaced with U+FFFD, the character Unicode keeps for "something unreadable was here".
// The message itself is posted to its target untouched: only our record of it changes.

export const NUL = "\u0000";
export const NUL_REPLACEMENT = "\uFFFD";

/** `value` with each NUL replaced with U+FFFD (the same string when it holds none). */
export const replaceNul = (value: string): string => (value.includes(NUL) ? value.replaceAll(NUL, NUL_REPLACEMENT) : value);

/** A flat record (a row) with replaceNul applied to each of its string fields. */
export function replaceNulInFields<T extends object>(row: T): T {
  let copy: Record<string, unknown> | null = null;
  // for...in, not Object.entries: a status row is checked for every recipient of every
  // message, and the entries' arrays were most of the cost (issue 38).
  for (const key in row) {
    if (!Object.hasOwn(row, key)) continue;
    const value = (row as Record<string, unknown>)[key];
    if (typeof value !== "string" || !value.includes(NUL)) continue;
    copy ??= { ...(row as Record<string, unknown>) };
    copy[key] = replaceNul(value);
  }
  return (copy as T | null) ?? row;
}

/**
 * Where the first NUL of a value bound for the store is: "" for the value itself, "[2]" or
 * ".subject" inside arrays and plain objects; null when it holds none. Bytes (Buffer,
 * Uint8Array) may hold any byte and are not looked into; nor are other objects (SQL
 * fragments, already checked when they were made). Walks with an explicit stack.
 */
export function nulPath(value: unknown): string | null {
  const stack: { value: unknown; path: string }[] = [{ value, path: "" }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes(NUL)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${path}[${i}]` });
    } else if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: `${path}.${entries[i]![0]}` });
    }
  }
  return null;
}
