// A full disk on the inbound side (issue 14, point 10c): the sender is told it is our
// local storage, not the target, and the log says "disk full" once, not at every retry.
// The failures are real: a path that cannot be written to, and SQLite refusing to grow
// past max_page_count (SQLITE_FULL), as it does on a full disk.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);

let t: TestApp;
let target: TestTarget;
const lines: { level: string; msg: string; where?: string; code?: string }[] = [];

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({ inbound: true, logger: createLogger({ level: "warn", sink: (l) => lines.push(JSON.parse(l)) }) });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

async function address(attachments: Record<string, unknown> = {}) {
  const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/in"), target_format: "json+n", attachments } });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string };
}

describe("local storage fails", () => {
  test("attachments kept locally cannot be written: 451 4.3.0 naming local storage, the target is not called, the status says why", async () => {
    const addr = await address({ store: "local" });
    const dir = join(t.dataDir, "attachments");
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    try {
      const before = target.at("/in").length;
      const result = await sendWithNodemailer(t.app.inboundPort!, {
        from: "alice@sender.test",
        to: addr.email,
        subject: "with a file",
        text: "x",
        attachments: [{ filename: "a.txt", content: "attached" }],
      });
      expect(result.response).toBe("451 4.3.0 Local storage on this server failed; try again later");
      expect(target.at("/in").length).toBe(before);
      const [s] = (await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}`, { auth })).body;
      expect(s).toMatchObject({
        status: "rejected",
        status_category: "delayed",
        response: "451 4.3.0 Local storage on this server failed; try again later",
      });
      expect(lines.filter((l) => l.msg === "local attachment store failed")).toHaveLength(1);
    } finally {
      rmSync(dir, { force: true });
    }
  });
});

describe("the database cannot grow (SQLITE_FULL)", () => {
  test("mail is still taken (statuses wait in the journal), 'disk full' is logged once while the move is retried every 100 ms; freed, the statuses are stored", async () => {
    const addr = await address();
    const { logDb } = t.app.store;
    // The filler's table first: with the file at its page limit there may be no page left for it.
    logDb.exec("CREATE TABLE test_filler (b BLOB)");
    const { page_count } = logDb.query("PRAGMA page_count").get() as { page_count: number };
    // One page more, for the filler table's root: the file need not have a free page (it has
    // none after start-up, and CREATE TABLE failed with SQLITE_FULL).
    logDb.exec(`PRAGMA max_page_count = ${page_count + 1}`);
    // Fill what room is left in the file, as other writes would fill a disk.
    let filled: unknown = null;
    while (filled === null) {
      try {
        logDb.query("INSERT INTO test_filler VALUES (zeroblob(200))").run();
      } catch (err) {
        filled = err;
      }
    }
    expect((filled as { code: string }).code).toBe("SQLITE_FULL");
    const before = lines.length;
    let sent = 0;
    try {
      // Until the statuses no longer fit in what room the tables' own pages had left.
      while (sent < 20 && !lines.slice(before).some((l) => l.msg === "disk full")) {
        const result = await sendWithNodemailer(t.app.inboundPort!, {
          from: "alice@sender.test",
          to: addr.email,
          subject: `${sent} ${"s".repeat(500)}`,
          text: "x",
        });
        expect(result.response).toBe("250 2.0.0 Accepted");
        sent++;
        await Bun.sleep(150);
      }
      // Ten retries a second for a second and a half: still the one line.
      await Bun.sleep(1500);
      const logged = lines.slice(before);
      expect(logged.filter((l) => l.msg === "disk full").map((l) => [l.where, l.code])).toEqual([["incoming statuses", "SQLITE_FULL"]]);
      expect(logged.filter((l) => l.msg.startsWith("incoming statuses could not be stored"))).toEqual([]);
    } finally {
      logDb.exec("PRAGMA max_page_count = 1073741823");
      logDb.exec("DROP TABLE test_filler");
    }
    const statuses = (await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}`, { auth })).body as {
      subject: string;
      status: string;
    }[];
    expect(statuses.map((s) => [s.subject.split(" ")[0], s.status])).toEqual(
      Array.from({ length: sent }, (_, i) => [String(sent - 1 - i), "200"]),
    );
  });
});
