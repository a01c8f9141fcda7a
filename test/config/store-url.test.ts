// store.url: which URLs the config accepts, the parts `postroom migrate` connects with,
// and the password kept out of every message.
import { describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import { describePostgres, parsePostgresUrl, withoutPassword } from "../../src/config/store-url.ts";

const STORE_URL_ERROR =
  'store.url: must be "" (the embedded SQLite in data_dir) or a PostgreSQL URL such as "postgres://user:password@host:5432/database" (postgres:// or postgresql://, with a host and a database; @ : / # ? in the password written as %40 %3A %2F %23 %3F)';

describe("store.url in the config", () => {
  const cases: [string, string, { postgresUrl: string | null } | "error"][] = [
    ["the default: SQLite", "", { postgresUrl: null }],
    [
      "postgres://",
      "postgres://postroom:pw@db.internal:5433/postroom",
      { postgresUrl: "postgres://postroom:pw@db.internal:5433/postroom" },
    ],
    [
      "postgresql://, no password, default port",
      "postgresql://postroom@10.0.0.5/mail",
      { postgresUrl: "postgresql://postroom@10.0.0.5/mail" },
    ],
    [
      "with parameters (sslmode)",
      "postgres://u:p@db/postroom?sslmode=require",
      { postgresUrl: "postgres://u:p@db/postroom?sslmode=require" },
    ],
    ["an IPv6 host", "postgres://u:p@[::1]:5432/postroom", { postgresUrl: "postgres://u:p@[::1]:5432/postroom" }],
    ["another scheme", "mysql://u:p@db:3306/postroom", "error"],
    ["a file path", "/var/lib/postroom/postroom.db", "error"],
    ["sqlite:// is not a way to say SQLite", "sqlite:///var/lib/postroom/postroom.db", "error"],
    ["no host", "postgres:///postroom", "error"],
    ["no database", "postgres://u:p@db:5432/", "error"],
    ["a port past 65535", "postgres://u:p@db:70000/postroom", "error"],
    ["a slash in the password, not encoded", "postgres://u:a/b@db/postroom", "error"],
    ["not a URL", "postgres://", "error"],
  ];
  for (const [name, url, expected] of cases) {
    test(name, () => {
      const r = parseConfigText(`[store]\nurl = "${url}"\n`);
      if (expected === "error") expect(r.ok ? [] : r.problems).toEqual([STORE_URL_ERROR]);
      else expect(r.ok ? { postgresUrl: r.config.store.postgresUrl } : r.problems).toEqual(expected);
    });
  }

  test("the error never quotes the URL, whose password it may hold", () => {
    const r = parseConfigText(`[store]\nurl = "mysql://u:hunter2@db/postroom"\n`);
    expect(r.ok ? "" : r.problems.join("\n")).not.toContain("hunter2");
  });

  test("connect_timeout: a duration above zero, 10 s by default", () => {
    const r = parseConfigText("");
    expect(r.ok && r.config.store.connectTimeoutMs).toBe(10_000);
    const bad = parseConfigText(`[store]\nconnect_timeout = "0s"\n`);
    expect(bad.ok ? [] : bad.problems).toEqual(['store.connect_timeout: must be a duration above zero such as "30s", "10m" or "1h"']);
  });
});

describe("a PostgreSQL URL's parts", () => {
  test("host, port (5432 by default), database, user and the decoded password", () => {
    expect(parsePostgresUrl("postgres://mail%40x:p%2Fw%40rd@db.internal/post%20room")).toEqual({
      url: "postgres://mail%40x:p%2Fw%40rd@db.internal/post%20room",
      host: "db.internal",
      port: 5432,
      database: "post room",
      user: "mail@x",
      password: "p/w@rd",
    });
  });

  test("described without the password", () => {
    const at = parsePostgresUrl("postgres://postroom:hunter2@[::1]:6432/mail")!;
    expect(describePostgres(at)).toBe("PostgreSQL at [::1]:6432, database mail as user postroom");
    expect(describePostgres(parsePostgresUrl("postgres://db/mail")!)).toBe("PostgreSQL at db:5432, database mail");
  });

  test("withoutPassword: the password, as written and decoded, becomes ***", () => {
    const at = parsePostgresUrl("postgres://postroom:p%2Fw%40rd@db/mail")!;
    expect(withoutPassword("url postgres://postroom:p%2Fw%40rd@db/mail said p/w@rd", at)).toBe(
      "url postgres://postroom:***@db/mail said ***",
    );
    expect(withoutPassword("nothing secret", parsePostgresUrl("postgres://db/mail")!)).toBe("nothing secret");
  });
});
