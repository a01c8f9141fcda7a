// The start line names the store (never the PostgreSQL password) and each listener's address.
import { describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import { listenText, startLineFields, storeDescription } from "../../src/start-line.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";

describe("storeDescription", () => {
  test.each([
    ["SQLite in data_dir", { dataDir: "/var/lib/postroom", store: { postgresUrl: null } }, "SQLite at /var/lib/postroom/postroom.db"],
    [
      "PostgreSQL, without the password",
      { dataDir: "/d", store: { postgresUrl: "postgres://postroom:hunter2@db.internal:5433/mail" } },
      "PostgreSQL at db.internal:5433, database mail as user postroom",
    ],
  ])("%s", (_name, config, text) => {
    expect(storeDescription(config as never)).toBe(text);
    expect(text).not.toContain("hunter2");
  });
});

describe("listenText", () => {
  test.each([
    [{ host: "127.0.0.1", port: 0 }, 41234, "127.0.0.1:41234"],
    [{ host: "::1", port: 8080 }, 8080, "[::1]:8080"],
    [{ host: "0.0.0.0", port: 465 }, null, "0.0.0.0:465 (not listening yet)"],
  ])("%o bound at %p", (at, port, text) => {
    expect(listenText(at, port)).toBe(text);
  });
});

test("startLineFields: the store and every listener that is on", () => {
  const parsed = parseConfigText(testConfigToml({ dataDir: "/tmp/p", accounts: [ACCOUNT_A], inbound: true }));
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  const ports: Record<string, number> = { http: 8080, inbound: 2525 };
  const fields = startLineFields({ version: "1.2.3", config: parsed.config, port: (k) => ports[k] ?? null });
  expect(fields).toMatchObject({ version: "1.2.3", accounts: 1, store: "SQLite at /tmp/p/postroom.db" });
  expect(fields.listeners).toEqual({ http: "127.0.0.1:8080", smtp_inbound: "127.0.0.1:2525" });
});
