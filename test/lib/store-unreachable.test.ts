// Which errors mean "the store is away" (503), as Bun's PostgreSQL client reports them
// (seen against a real server stopped mid-query and while down), and which are not.
import { expect, test } from "bun:test";
import { isStoreUnreachable } from "../../src/lib/store-unreachable.ts";

const pg = (code: string, errno?: string) => Object.assign(new Error("x"), { name: "PostgresError", code, errno });

test.each([
  ["a query cut by a fast shutdown (57P01)", pg("ERR_POSTGRES_SERVER_ERROR", "57P01"), true],
  ["a crash shutdown (57P02)", pg("ERR_POSTGRES_SERVER_ERROR", "57P02"), true],
  ["a server still starting (57P03)", pg("ERR_POSTGRES_SERVER_ERROR", "57P03"), true],
  ["a connection exception (08006)", pg("ERR_POSTGRES_SERVER_ERROR", "08006"), true],
  ["a refused connection, server down", pg("ERR_POSTGRES_CONNECTION_REFUSED"), true],
  ["a connection closed", pg("ERR_POSTGRES_CONNECTION_CLOSED"), true],
  ["a connect timeout", pg("ERR_POSTGRES_CONNECTION_TIMEOUT"), true],
  ["a unique violation: a bug or a race, not an outage", pg("ERR_POSTGRES_SERVER_ERROR", "23505"), false],
  ["a statement timeout (57014)", pg("ERR_POSTGRES_SERVER_ERROR", "57014"), false],
  ["SQLite busy", Object.assign(new Error("busy"), { code: "SQLITE_BUSY" }), false],
  ["a plain error", new Error("boom"), false],
  ["not an error", "Failed to connect", false],
])("%s", (_name, err, expected) => {
  expect(isStoreUnreachable(err)).toBe(expected);
});

test("an error that wraps a store outage (DKIM signing around the key's read) is one too", () => {
  const wrapped = new Error("DKIM signing failed", { cause: pg("ERR_POSTGRES_CONNECTION_REFUSED") });
  expect(isStoreUnreachable(wrapped)).toBe(true);
  expect(isStoreUnreachable(new Error("DKIM signing failed", { cause: new Error("bad key") }))).toBe(false);
});
