// SPF and DKIM go out while the message is parsed (issue 38: bench:inbound's bare pipeline
// overlaps the two; Postroom parsed first, then asked DNS). The verdicts stay the same.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../../src/lib/clock.ts";
import { DnsError, type DnsResolver } from "../../../src/lib/dns.ts";
import { silentLogger } from "../../../src/lib/logger.ts";
import type { Address } from "../../../src/inbound/addresses/address.ts";
import { splitTarget } from "../../../src/inbound/addresses/target-url.ts";
import { AuthChecker, hasDkimSignatureField } from "../../../src/inbound/parse/auth-checks.ts";
import { examineMessage } from "../../../src/inbound/parse/examine.ts";
import { extractMessage } from "../../../src/inbound/parse/extract.ts";
import { postMessage } from "../../../src/inbound/post-message.ts";
import type { IncomingStatus } from "../../../src/inbound/statuses/incoming-status.ts";
import type { PostDeps, Transaction } from "../../../src/inbound/transaction.ts";
import { TestTarget } from "../../helpers/target.ts";

describe("hasDkimSignatureField", () => {
  const cases: [string, string, boolean][] = [
    ["a signature", "From: a@b.c\r\nDKIM-Signature: v=1; d=b.c\r\n\r\nbody", true],
    ["in lower case, a space before the colon", "From: a@b.c\r\ndkim-signature : v=1\r\n\r\nbody", true],
    ["the first line, LF endings", "DKIM-Signature: v=1\nFrom: a@b.c\n\nbody", true],
    ["none", "From: a@b.c\r\nSubject: DKIM-Signature: no\r\n\r\nbody", false],
    ["only in a continuation line", "Subject: x\r\n DKIM-Signature: v=1\r\n\r\nbody", false],
    ["only in the body", "From: a@b.c\r\n\r\nDKIM-Signature: v=1\r\n", false],
    ["a longer field name", "DKIM-Signatures: v=1\r\n\r\n", false],
    ["no body at all", "From: a@b.c\r\nDKIM-Signature: v=1", true],
  ];
  for (const [name, text, has] of cases) test(name, () => expect(hasDkimSignatureField(Buffer.from(text, "latin1"))).toBe(has));
});

/** Every DNS answer takes DNS_MS; the sender's SPF and DMARC records exist. */
const DNS_MS = 400;
const RECORDS: Record<string, string> = { "sender.test": "v=spf1 ip4:192.0.2.1 -all", "_dmarc.sender.test": "v=DMARC1; p=reject" };
const slowResolver = {
  resolve: async (name: string, type: string) => {
    await Bun.sleep(DNS_MS);
    const record = type.toUpperCase() === "TXT" ? RECORDS[name.toLowerCase()] : undefined;
    if (record === undefined) throw new DnsError("ENOTFOUND", name);
    return [[record]];
  },
} as unknown as DnsResolver;

/** A parse that takes PARSE_MS (a large message, a busy worker). */
const PARSE_MS = 400;

let target: TestTarget;
beforeAll(() => {
  target = TestTarget.start();
});
afterAll(() => target.stop());

/** A parse that takes PARSE_MS, then extractMessage's. */
async function slowExtract(raw: Buffer, limits: PostDeps["limits"], traceBytes: number) {
  await Bun.sleep(PARSE_MS);
  return extractMessage(raw, limits, traceBytes);
}

/** PostDeps.examine with `auth`, on this thread, with the slow parse. */
const examineWith =
  (auth: AuthChecker): PostDeps["examine"] =>
  (raw, limits, traceBytes, session) =>
    examineMessage({ raw, limits, traceBytes, session }, { auth, extract: slowExtract });

/** PostDeps for postMessage: the slow resolver, the parse after PARSE_MS, the statuses kept in `rows`. */
function setup(limits = { maxHeaderBytes: 256 * 1024, maxMimeDepth: 50, maxMimeParts: 500 }) {
  const address: Address = {
    id: "a1a1a1a1a1a1a1a1a1a1",
    accountId: "b0b0b0b0b0b0b0b0",
    target: splitTarget(target.url("/in")),
    targetFormat: "json+n",
    nickname: null,
    attachments: {},
    signingSecret: null,
    createdAtMs: 0,
    updatedAtMs: 0,
  };
  const rows: IncomingStatus[] = [];
  const deps = {
    hostname: "mx.postroom.test",
    limits,
    examine: examineWith(new AuthChecker(slowResolver, 0)),
    attachmentUrlTtlMs: 60_000,
    post: {
      resolver: slowResolver,
      policy: { allowPrivate: true },
      timeoutMs: 5000,
      maxRedirects: 0,
      responseMaxBytes: 1024,
      userAgent: "Postroom test",
    },
    resolver: slowResolver,
    statuses: { record: async (r: IncomingStatus[]) => void rows.push(...r) },
    statusRetry: { failed: () => {} },
    clock: new ManualClock(Date.parse("2026-11-28T00:00:00Z")),
    logger: silentLogger,
    spamd: null,
  } as unknown as PostDeps;
  const tx: Transaction = {
    id: "0123456789abcdef",
    log: silentLogger,
    mailFrom: "news@sender.test",
    helo: "client.sender.test",
    ehlo: true,
    remoteIp: "192.0.2.1",
    tls: null,
    authenticated: false,
    groups: [{ address, customDomain: null, rcpts: ["a1a1a1a1a1a1a1a1a1a1@in.postroom.test"] }],
    bounceRcpts: [],
    accepted: [{ rcpt: "a1a1a1a1a1a1a1a1a1a1@in.postroom.test", accountId: address.accountId }],
  };
  return { deps, tx, rows };
}

test("SPF is looked up while the message is parsed, and the verdicts hold", async () => {
  const { deps, tx, rows } = setup();
  const raw = Buffer.from(
    "From: News <news@sender.test>\r\nTo: a1a1a1a1a1a1a1a1a1a1@in.postroom.test\r\nSubject: hi\r\n\r\nHello\r\n",
    "latin1",
  );
  const t0 = performance.now();
  const reply = await postMessage(raw, tx, deps);
  const ms = performance.now() - t0;
  expect(reply.code).toBe(250);
  const envelope = target.at("/in")[0]!.json.envelope;
  expect(envelope.spf).toEqual({ result: "pass", domain: "sender.test" });
  expect(envelope.dmarc).toEqual({ result: "pass", domain: "sender.test", policy: "reject" });
  expect(envelope.dkim).toEqual({ result: "none", signatures: [] });
  expect(rows).toHaveLength(1);
  // The parse, SPF, then DMARC's two lookups (the sender's domain, then its organisational
  // domain's), one after the other: PARSE_MS + 3 DNS_MS (1,600 ms). With SPF under way
  // during the parse: max(PARSE_MS, DNS_MS) + 2 DNS_MS (1,200 ms).
  expect(ms).toBeLessThan(PARSE_MS + 2.5 * DNS_MS);
});

// A message the parse refuses (here: more MIME parts than allowed) is answered only once
// the checks started for it have ended: until its reply, the listener keeps the message's
// memory reserved (smtp-listener.ts), and a DKIM verification still reading its bytes
// must not outlive that.
test("a message the parse refuses is answered once the lookups started for it have ended", async () => {
  const { deps, tx, rows } = setup({ maxHeaderBytes: 256 * 1024, maxMimeDepth: 50, maxMimeParts: 2 });
  const parts = [1, 2, 3].map((i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join("");
  const raw = Buffer.from(
    "DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=sender.test; s=sel; h=from:subject; bh=AAAA; b=AAAA\r\n" +
      `From: News <news@sender.test>\r\nSubject: parts\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`,
    "latin1",
  );
  let lookupsEndedMs = 0;
  const resolve = slowResolver.resolve;
  const auth = new AuthChecker(
    {
      ...slowResolver,
      // Slower than the parse: the lookups end after the parse has refused the message.
      resolve: async (name: string, type: string) => {
        try {
          await Bun.sleep(PARSE_MS);
          return await resolve(name, type);
        } finally {
          lookupsEndedMs = performance.now();
        }
      },
    } as DnsResolver,
    0,
  );
  const reply = await postMessage(raw, tx, { ...deps, examine: examineWith(auth) });
  const repliedMs = performance.now();
  expect(reply.code).toBe(554);
  expect(reply.text).toContain("MIME parts");
  expect(rows.map((r) => r.status)).toEqual(["rejected"]);
  expect(target.at("/in")).toHaveLength(1);
  expect(lookupsEndedMs).toBeGreaterThan(0);
  expect(repliedMs).toBeGreaterThanOrEqual(lookupsEndedMs);
});
