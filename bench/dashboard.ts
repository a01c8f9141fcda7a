// `bun run bench:dashboard`: does the dashboard stay fast on a big store? The API calls its
// pages make, timed against Postroom serving a store of N incoming statuses and N sent
// messages (each with a recipient and its events) spread over 90 days. Target: the median
// of each call under 100 ms on this machine. An absolute figure, not a ratio: no peer
// serves these pages; the data size is printed with it.
//
//   bun run bench:dashboard [--rows N] [--calls C]
//   defaults: N=1000000, C=30 (each call, after 3 untimed ones) (or BENCH_ROWS, BENCH_CALLS)
//
// How it is set up, and why:
// - Postroom runs as in production (bench/postroom.ts: `serve` as a child process). It is
//   started once to create 10 addresses through the API (E2) and stopped; the store is then
//   filled through the repositories' own writes (statuses: journaledStore's grouped
//   insert; sent messages: the outbound repository's insert, with a registration, a
//   dispatch and a delivery or bounce event per recipient), so the hourly counts behind the
//   overview are filled as they are in production; then Postroom is started again on it.
// - The calls go through the dashboard's own session (POST /dashboard/session, then the
//   cookie), over HTTP on loopback, one at a time: the figure is what a person waits.
// - Searches use terms that match few rows and terms that match none (the worst case for a
//   search: it reads to the end of what it may read).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { journaledStore } from "../src/inbound/statuses/statuses.repo.ts";
import type { IncomingStatus } from "../src/inbound/statuses/incoming-status.ts";
import { createOutboundRepo } from "../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../src/outbound/queue/wiring.ts";
import { NO_TRACKING } from "../src/outbound/queue/message.ts";
import { openStore } from "../src/store/store.ts";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { intOption, parseOptions } from "./args.ts";
import { loadAverage, median } from "./measure.ts";
import { ACCOUNT, startPostroom } from "./postroom.ts";

const TARGET_MS = 100;
const DAY_MS = 86_400_000;
const SPAN_DAYS = 90;
const ADDRESSES = 10;
const CHUNK = 20_000;

function options() {
  const values = parseOptions("bun run bench:dashboard [--rows N] [--calls C]", { rows: { type: "string" }, calls: { type: "string" } });
  return { rows: intOption(values.rows, "BENCH_ROWS", 1_000_000, 1), calls: intOption(values.calls, "BENCH_CALLS", 30, 1) };
}

/** Row i of N, spread evenly over the last SPAN_DAYS days, oldest first. */
const timeOf = (i: number, n: number, nowMs: number) => nowMs - SPAN_DAYS * DAY_MS + Math.floor((i / n) * SPAN_DAYS * DAY_MS);

function fillStatuses(dataDir: string, addresses: string[], n: number, nowMs: number): void {
  const store = openStore(dataDir);
  const target = journaledStore(store);
  const seq0 = target.lastStoredSeq();
  for (let done = 0; done < n; done += CHUNK) {
    const chunk: (IncomingStatus & { seq: number })[] = [];
    for (let i = done; i < Math.min(n, done + CHUNK); i++) {
      const address = addresses[i % addresses.length]!;
      const refused = i % 50 === 0;
      chunk.push({
        id: (0x1000000000000 + i).toString(16).padStart(16, "0"),
        accountId: ACCOUNT.id,
        addressId: address,
        messageId: `msg-${i}@sender${i % 97}.example`,
        mailFrom: `customer${i % 5000}@sender${i % 97}.example`,
        rcptTo: `${address}@in.postroom.bench`,
        subject: `Order ${i} confirmation`,
        status: refused ? "422" : "200",
        statusCategory: refused ? "rejected" : "successful",
        tls: "TLSv1.3",
        sizeBytes: 4100,
        remoteIp: "192.0.2.1",
        response: refused ? "unknown customer" : null,
        postroomMessageId: null,
        createdAtMs: timeOf(i, n, nowMs),
        seq: seq0 + i + 1,
      });
    }
    target.store(chunk);
  }
  store.close();
}

async function fillSent(dataDir: string, n: number, nowMs: number): Promise<void> {
  const store = openStore(dataDir);
  const repo = createOutboundRepo(store, queuePorts(store));
  for (let done = 0; done < n; done += CHUNK) {
    const writes: Promise<unknown>[] = [];
    for (let i = done; i < Math.min(n, done + CHUNK); i++) {
      const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
      const at = timeOf(i, n, nowMs);
      const email = `reader${i % 20_000}@example${i % 89}.org`;
      const bounced = i % 40 === 0;
      const recipientId = i.toString(16).padStart(16, "0");
      writes.push(
        repo.insert(
          {
            id,
            accountId: ACCOUNT.id,
            outboundAccountId: ACCOUNT.outboundId,
            from: "news@sender.bench",
            subject: `Newsletter ${i}`,
            messageId: `<${id}@mx.postroom.bench>`,
            to: [email],
            cc: [],
            tags: [i % 3 === 0 ? "weekly" : "promo"],
            testMode: false,
            priority: "standard",
            sizeBytes: 5000,
            tracking: NO_TRACKING,
            createdAtMs: at,
          },
          [
            {
              id: recipientId,
              messageId: id,
              position: 0,
              email,
              domain: email.split("@")[1]!,
              type: "to",
              status: bounced ? "bounce" : "delivery",
              state: "done",
              lane: 1,
              attempts: 1,
              firstAttemptAtMs: at + 1000,
              nextAttemptAtMs: 0,
            },
          ],
          [
            { messageId: id, recipientId, kind: "registration", details: {}, createdAtMs: at },
            { messageId: id, recipientId, kind: "dispatch", details: { mx: "mx.example.org", attempt: 1 }, createdAtMs: at + 1000 },
            bounced
              ? {
                  messageId: id,
                  recipientId,
                  kind: "bounce",
                  details: { smtp_code: 550, smtp_response: "550 5.1.1 no such user" },
                  createdAtMs: at + 2000,
                }
              : {
                  messageId: id,
                  recipientId,
                  kind: "delivery",
                  details: { smtp_code: 250, smtp_response: "250 2.0.0 OK" },
                  createdAtMs: at + 2000,
                },
          ],
          { webhook: false },
        ),
      );
    }
    await Promise.all(writes);
  }
  await repo.flush();
  store.close();
}

async function main() {
  const opts = options();
  const work = mkdtempSync(join(tmpdir(), "postroom-bench-dashboard-"));
  const dns = await TestDnsServer.start();
  try {
    const dataDir = join(work, "data");
    let { child, httpPort } = await startPostroom(work, dns.address, {}, []);
    const auth = { authorization: `Bearer ${ACCOUNT.token}`, "content-type": "application/json" };
    const addresses: string[] = [];
    for (let i = 0; i < ADDRESSES; i++) {
      const r = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.id}/addresses`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ target: "https://example.com/in", target_format: "json+n", nickname: `address ${i}` }),
      });
      addresses.push(((await r.json()) as { id: string }).id);
    }
    await child.stop();

    const nowMs = Date.now();
    let t0 = performance.now();
    fillStatuses(dataDir, addresses, opts.rows, nowMs);
    console.log(
      `filled ${opts.rows} incoming statuses (${ADDRESSES} addresses, ${SPAN_DAYS} days) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    t0 = performance.now();
    await fillSent(dataDir, opts.rows, nowMs);
    console.log(`filled ${opts.rows} sent messages (1 recipient, 3 events each) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const dbBytes = Bun.file(join(dataDir, "postroom.db")).size;
    console.log(`database: ${(dbBytes / 1e9).toFixed(2)} GB; machine: 2 cores, bun ${Bun.version}, load average ${loadAverage()}`);

    ({ child, httpPort } = await startPostroom(work, dns.address, {}, []));
    child.ready();
    const base = `http://127.0.0.1:${httpPort}`;
    const signIn = await fetch(`${base}/dashboard/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-postroom-dashboard": "1" },
      body: JSON.stringify({ token: ACCOUNT.token }),
    });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const api = (path: string) => `${base}/api/v0.1/${ACCOUNT.id}/${path}`;
    const first = addresses[0]!;
    const q = encodeURIComponent;
    const calls: [string, string][] = [
      ["overview, 24 hours", api("stats?period=24h")],
      ["overview, 7 days", api("stats?period=7d")],
      ["addresses, first page", api("addresses")],
      ["incoming, first page", api(`incoming_statuses?address_id=${first}`)],
      ["incoming, search a sender", api(`incoming_statuses?address_id=${first}&query=${q("from:customer1234@")}`)],
      ["incoming, search status", api(`incoming_statuses?address_id=${first}&query=${q("status:422")}`)],
      ["incoming, search no match", api(`incoming_statuses?address_id=${first}&query=${q("nothing-matches-this")}`)],
      ["sent, first page", api(`outbound_messages?outbound_account_id=${ACCOUNT.outboundId}`)],
      ["sent, search a recipient", api(`outbound_messages?outbound_account_id=${ACCOUNT.outboundId}&query=${q("to:reader1234@")}`)],
      ["sent, search status", api(`outbound_messages?outbound_account_id=${ACCOUNT.outboundId}&query=${q("status:bounce")}`)],
      ["sent, search no match", api(`outbound_messages?outbound_account_id=${ACCOUNT.outboundId}&query=${q("nothing-matches-this")}`)],
      ["sent message with events", api("outbound_messages/00000000-0000-4000-8000-000000000001")],
      ["suppressions, first page", api(`suppressions?outbound_account_id=${ACCOUNT.outboundId}`)],
      ["sending domains", api("sending_domains")],
    ];
    let worst = 0;
    console.log(`\n${"call".padEnd(28)} median      p90      max   (ms, ${opts.calls} calls after 3 untimed)`);
    for (const [name, url] of calls) {
      const times: number[] = [];
      for (let k = 0; k < opts.calls + 3; k++) {
        const start = performance.now();
        const res = await fetch(url, { headers: { cookie } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
        if (k >= 3) times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      const m = median(times);
      worst = Math.max(worst, m);
      console.log(
        `${name.padEnd(28)} ${m.toFixed(1).padStart(6)} ${times[Math.floor(times.length * 0.9)]!.toFixed(1).padStart(8)} ${times.at(-1)!.toFixed(1).padStart(8)}`,
      );
    }
    console.log(
      `\nslowest median: ${worst.toFixed(1)} ms (target < ${TARGET_MS} ms) with ${opts.rows} incoming statuses and ${opts.rows} sent messages`,
    );
    await child.stop();
  } finally {
    await dns.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
