// What a message kept for a failing target (on_target_failure = "queue") costs on disk:
// N messages of each size put into inbound_queue through the repository, on SQLite (the
// database file after a WAL checkpoint) and on PostgreSQL (the table with its TOAST and
// indexes), divided by N and compared with the message's own size.
// Run: bun bench/inbound-queue-disk.ts   (PostgreSQL from Debian's postgresql package)
import { statSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { createInboundQueueRepo } from "../src/inbound/queue/inbound-queue.repo.ts";
import type { InboundQueueRepo, QueuedMessage } from "../src/inbound/queue/inbound-queue.port.ts";
import { pgDb } from "../src/store/db/pg-db.ts";
import { POSTGRES_MIGRATIONS } from "../src/store/migrations/postgres/index.ts";
import { openStore } from "../src/store/store.ts";
import { startPostgres } from "../test/helpers/postgres.ts";
import { tempDir } from "../test/helpers/tmp.ts";

const COUNT = 500;
const SIZES = [2_000, 20_000, 200_000];

function message(i: number, size: number): QueuedMessage {
  // Text a mail client would send: base64-like lines that compress poorly, as attachments do.
  const body = Buffer.from(crypto.getRandomValues(new Uint8Array(Math.ceil((size * 3) / 4))))
    .toString("base64")
    .slice(0, size);
  const raw = Buffer.from(`From: alice@sender.test\r\nTo: x@in.example.com\r\nSubject: m${i}\r\n\r\n${body}`);
  const trace = `Return-Path: <alice@sender.test>\r\nReceived: from mx.sender.test (mx.sender.test [192.0.2.1]) by mx.postroom.test with ESMTP id ${i}; Fri, 27 Nov 2026 21:00:00 +0000\r\n`;
  return {
    id: `q${i.toString(16).padStart(15, "0")}`,
    accountId: "a000000000000001",
    addressId: "0123456789abcdef0123",
    statusIds: ["0123456789abcdef"],
    facts: {
      mailFrom: "alice@sender.test",
      helo: "mx.sender.test",
      ehlo: true,
      remoteIp: "192.0.2.1",
      tls: { protocol: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384" },
      rcpts: ["0123456789abcdef0123@in.example.com"],
      trace,
      customDomain: null,
      envelope: {
        to: "0123456789abcdef0123@in.example.com",
        recipients: ["0123456789abcdef0123@in.example.com"],
        from: "alice@sender.test",
        helo_domain: "mx.sender.test",
        remote_ip: "192.0.2.1",
        spf: { result: "pass", domain: "sender.test" },
        tls: true,
        tls_cipher: "TLSv1.3",
        md5: "0".repeat(32),
        dkim: { signed: true, valid: true, domains: ["sender.test"] },
        dmarc: { result: "pass", policy: "none" },
      } as never,
      messageId: `m${i}@sender.test`,
      subject: `m${i}`,
      postroomMessageId: "0".repeat(32),
    },
    message: raw,
    traceBytes: Buffer.byteLength(trace),
    sizeBytes: raw.length,
    attempts: 1,
    createdAtMs: Date.now(),
    nextAttemptAtMs: Date.now() + 60_000,
    lastResponse: "503 Service Unavailable",
  };
}

async function fill(repo: InboundQueueRepo, size: number, offset: number): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < COUNT; i++) {
    const m = message(offset + i, size);
    bytes += m.message.byteLength;
    await repo.insert(m);
  }
  return bytes;
}

const dir = tempDir();
const store = openStore(dir.path);
const sqliteRepo = createInboundQueueRepo(store.main);
const pg = await startPostgres();
const sql = new SQL(pg.url, { max: 2 });
for (const m of POSTGRES_MIGRATIONS) await sql.begin((tx) => tx.unsafe(m.sql));
const pgRepo = createInboundQueueRepo(pgDb(sql));
const dbFile = join(dir.path, "postroom.db");
const sqliteBytes = () => {
  store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return statSync(dbFile).size;
};
const pgBytes = async () => Number((await sql`SELECT pg_total_relation_size('inbound_queue') AS n`)[0].n);

console.log(`| message size | SQLite bytes per kept message | PostgreSQL bytes per kept message |`);
console.log(`|---|---|---|`);
let offset = 0;
for (const size of SIZES) {
  const [s0, p0] = [sqliteBytes(), await pgBytes()];
  const raw = await fill(sqliteRepo, size, offset);
  await fill(pgRepo, size, offset);
  offset += COUNT;
  await sql`CHECKPOINT`;
  const [s1, p1] = [sqliteBytes(), await pgBytes()];
  const perRaw = raw / COUNT;
  const fmt = (total: number) => `${Math.round(total / COUNT)} (${(total / COUNT / perRaw).toFixed(2)}× the message)`;
  console.log(`| ${Math.round(perRaw)} B | ${fmt(s1 - s0)} | ${fmt(p1 - p0)} |`);
}
await sql.close();
await pg.stop();
store.close();
dir.remove();
