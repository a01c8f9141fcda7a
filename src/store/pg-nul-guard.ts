// The last check before PostgreSQL: no value bound for a query holds NUL (U+0000), which
// its text type cannot store. Every field from outside is refused or cleaned before it gets
// here (src/lib/stored-text.ts); this guard is for the one that was missed, so that it fails
// here, naming the value, in the tests that run on PostgreSQL, and not only on the server
// in production, with a message about encodings, or never on SQLite, which stores it.
import type { SQL } from "bun";
import { nulPath } from "../lib/stored-text.ts";
import { PgValueError } from "./pg-values.ts";

/** A template literal's strings (sql`...`), as opposed to a helper call (sql(values)). */
const isTemplate = (first: unknown): boolean => Array.isArray(first) && Object.hasOwn(first, "raw");

/** Throws PgValueError when one of `values` holds NUL (U+0000), naming it (`what` 1, 2...). */
export function refuseNul(values: readonly unknown[], what: string): void {
  for (let i = 0; i < values.length; i++) {
    const path = nulPath(values[i]);
    if (path !== null)
      throw new PgValueError(
        `${what} ${i + 1}${path} holds NUL (U+0000), which PostgreSQL text cannot store: refuse or replace it before the store (src/lib/stored-text.ts)`,
      );
  }
}

/**
 * `sql` with every bound value checked: of a tagged template, of a helper (sql(rows)), of
 * unsafe(text, params), and the same for the transaction a begin() hands its callback.
 * Bytes (BYTEA: Buffer, Uint8Array) may hold any byte and are not looked into.
 */
export function guardNul<T extends SQL>(sql: T): T {
  return new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      refuseNul(isTemplate(args[0]) ? args.slice(1) : args, isTemplate(args[0]) ? "query value" : "helper value");
      return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args);
    },
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "begin") {
        return (...args: unknown[]) => {
          const callback = args.at(-1) as (tx: SQL) => unknown;
          return value.apply(target, [...args.slice(0, -1), (tx: SQL) => callback(guardNul(tx))]);
        };
      }
      if (prop === "unsafe") {
        return (text: string, params?: unknown[]) => {
          refuseNul(params ?? [], "parameter");
          return value.call(target, text, params);
        };
      }
      return value.bind(target);
    },
  });
}
