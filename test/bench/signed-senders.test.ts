// bench:inbound's message set (bench/signed-senders.ts): each sender domain's DKIM
// signature is made once and reused on every message of that domain, which only holds if
// it covers nothing that differs between them. Checked with an independent verifier
// (dkimpy, the library of Debian's dkimverify) and with Postroom's own SPF/DKIM/DMARC
// checker against the records the benchmark publishes, in a real DNS server on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleParser } from "mailparser";
import {
  generateSenderKey,
  publishSenders,
  senderDomain,
  senderRecords,
  signedMessageSet,
  tallyQueries,
  type SignedMessageSet,
} from "../../bench/signed-senders.ts";
import { AuthChecker, messageFacts } from "../../src/inbound/parse/auth-checks.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { dkimpyVerify } from "../helpers/dkimpy.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { requireTools } from "../helpers/tools.ts";

const DOMAINS = 3;
const key = generateSenderKey();
let set: SignedMessageSet;
let dns: TestDnsServer;

beforeAll(async () => {
  set = await signedMessageSet("box@in.postroom.bench", DOMAINS, key);
  dns = await TestDnsServer.start();
  publishSenders(dns, DOMAINS, key);
});
afterAll(() => dns.stop());

const records = Object.fromEntries(Array.from({ length: DOMAINS }, (_, k) => senderRecords(k, key)).flat());

describe("the signed message set", () => {
  test("message seq comes from domain seq mod D with a Message-ID of its own; its wire bytes are its text, dot-stuffed", () => {
    const m = set.message(4);
    expect(m.mailFrom).toBe(`news@${senderDomain(1)}`);
    expect(set.text(4)).toContain(`From: "Postroom News" <news@${senderDomain(1)}>`);
    expect(set.text(4)).toContain(`Message-ID: <bench-000004@${senderDomain(1)}>`);
    const wire = Buffer.from(m.data).toString("latin1");
    expect(wire.endsWith("\r\n.\r\n")).toBe(true);
    expect(wire.slice(0, -3).replace(/(^|\r\n)\.\./g, "$1.")).toBe(set.text(4));
    expect(set.size).toEqual({ min: Buffer.byteLength(set.text(0)), max: Buffer.byteLength(set.text(0)) });
  });

  requireTools("python3-dkim")(
    "dkimpy verifies every domain's signature on messages with different Message-IDs, and not once a signed header changes",
    () => {
      for (const seq of [0, 1, 2, 3, 5, 3 * 1000 + 2]) {
        const text = set.text(seq);
        expect(text).toContain(`Message-ID: <bench-${String(seq).padStart(6, "0")}@`);
        expect(dkimpyVerify(text, records)).toEqual([
          expect.objectContaining({ domain: senderDomain(seq % DOMAINS), selector: "bench2048", algorithm: "rsa-sha256", valid: true }),
        ]);
      }
      const changed = set.text(4).replace("Subject: What's new", "Subject: What is new");
      expect(dkimpyVerify(changed, records)).toEqual([expect.objectContaining({ valid: false })]);
    },
  );

  test("Postroom's checker finds SPF, DKIM and DMARC pass for each domain, with the DMARC policy its record asks for", async () => {
    const checker = new AuthChecker(createResolver({ servers: [dns.address], timeoutMs: 1000, cacheTtlMs: 0 }), 0);
    for (const seq of [0, 1, 5]) {
      const raw = Buffer.from(set.text(seq));
      const m = set.message(seq);
      const auth = await checker.check(
        raw,
        { mailFrom: m.mailFrom, helo: "client.sender.bench.test", remoteIp: "127.0.0.1", mta: "mx.postroom.bench" },
        messageFacts(await simpleParser(raw)),
      );
      const domain = senderDomain(seq % DOMAINS);
      expect(auth).toEqual({
        spf: { result: "pass", domain },
        dkim: { result: "pass", signatures: [{ domain, selector: "bench2048", result: "pass" }] },
        dmarc: { result: "pass", domain, policy: seq % DOMAINS === 1 ? "reject" : "none" },
      });
    }
    // The same message from a client the SPF record does not list: the check is real.
    const raw = Buffer.from(set.text(0));
    const foreign = await checker.check(
      raw,
      { mailFrom: set.message(0).mailFrom, helo: "elsewhere.test", remoteIp: "192.0.2.1", mta: "mx.postroom.bench" },
      messageFacts(await simpleParser(raw)),
    );
    expect(foreign.spf.result).toBe("fail");
  });
});

test("the DNS queries are sorted by the sender record they ask for; any other name is listed as it is", () => {
  const queries = new Map([
    ["sender-00000.test", 2],
    ["sender-00001.test", 1],
    ["bench2048._domainkey.sender-00000.test", 3],
    ["_dmarc.sender-00001.test", 1],
    ["bounces.postroom.bench", 2],
    ["_dmarc.sender.bench.test", 1],
    ["other._domainkey.sender-00000.test", 1],
  ]);
  expect(tallyQueries(queries)).toEqual({
    kinds: { spf: { queries: 3, names: 2 }, dkim: { queries: 3, names: 1 }, dmarc: { queries: 1, names: 1 } },
    other: [
      ["bounces.postroom.bench", 2],
      ["_dmarc.sender.bench.test", 1],
      ["other._domainkey.sender-00000.test", 1],
    ],
  });
});
