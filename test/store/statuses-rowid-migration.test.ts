// Migration 9 rebuilds incoming_statuses as a rowid table: statuses recorded before it
// must survive, list in the same order, and new ones must follow them.
import { expect, test } from "bun:test";
import { createStatusRepo } from "../../src/inbound/statuses.repo.ts";
import { type IncomingStatus } from "../../src/inbound/incoming-status.ts";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const newDir = tempDirsPerTest();

const status = (id: string, createdAtMs: number): IncomingStatus => ({
  id,
  accountId: "a000000000000001",
  addressId: "addr0000000000000001",
  messageId: `${id}@sender.test`,
  mailFrom: "alice@sender.test",
  rcptTo: "addr0000000000000001@in.postroom.test",
  subject: `message ${id}`,
  status: "delivered",
  statusCategory: "successful",
  tls: null,
  sizeBytes: 1234,
  remoteIp: "192.0.2.1",
  response: null,
  postroomMessageId: null,
  storeUrl: null,
  envelope: null,
  createdAtMs,
});

test("statuses recorded before migration 9 survive it, in order, and new ones list first", async () => {
  const dir = newDir();
  const before = openStore(dir, MIGRATIONS.filter((m) => m.version < 9));
  // Written as the versions before migration 9 wrote them (today's repository writes columns of later migrations).
  const insert = before.db.query(
    "INSERT INTO incoming_statuses (id, account_id, address_id, message_id, mail_from, rcpt_to, subject, status, status_category, tls, size, remote_ip, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  for (const s of [status("f000000000000001", 1000), status("0000000000000002", 2000), status("8000000000000003", 2000)])
    insert.run(s.id, s.accountId, s.addressId, s.messageId, s.mailFrom, s.rcptTo, s.subject, s.status, s.statusCategory, s.tls, s.sizeBytes, s.remoteIp, s.response, s.createdAtMs);
  expect(before.db.query("SELECT COUNT(*) AS n FROM incoming_statuses").get()).toEqual({ n: 3 });
  before.close();

  const after = openStore(dir);
  expect(after.db.query("SELECT sql FROM sqlite_master WHERE name = 'incoming_statuses'").get()).not.toEqual(expect.objectContaining({ sql: expect.stringContaining("PRIMARY KEY") }));
  const repo = createStatusRepo(after);
  await repo.record([status("1000000000000004", 3000)]);
  const page = await repo.list("a000000000000001", "addr0000000000000001", [], { limit: 10 });
  expect(page.items.map((s) => s.id)).toEqual(["1000000000000004", "8000000000000003", "0000000000000002", "f000000000000001"]);
  expect(page.items[3]).toEqual(status("f000000000000001", 1000));
  repo.close();
  after.close();
});
