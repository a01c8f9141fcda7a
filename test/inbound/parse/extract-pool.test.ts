// The parse workers examine a received message (issue 38): they check its SPF and DKIM
// (and, with two workers or more, parse it and check DMARC too) with a resolver of their own, made with the main resolver's options,
// asking the same (real, loopback) DNS server. The verdicts must be exactly the main
// thread's; a refusal must come back as one; a resolver a worker cannot make (a fake)
// keeps the checks on the main thread.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimSignatures } from "../../../src/domains/dkim.ts";
import { AuthChecker, type AuthSession } from "../../../src/inbound/parse/auth-checks.ts";
import { examineMessage } from "../../../src/inbound/parse/examine.ts";
import { extractMessage } from "../../../src/inbound/parse/extract.ts";
import { ExtractPool } from "../../../src/inbound/parse/extract-pool.ts";
import { MessageRefused } from "../../../src/inbound/parse/parse.ts";
import { createResolver, DnsError, type DnsResolver } from "../../../src/lib/dns.ts";
import { silentLogger } from "../../../src/lib/logger.ts";
import { TestDnsServer } from "../../helpers/dns-server.ts";
import { ORDER_MESSAGE } from "../../helpers/order-message.ts";

const LIMITS = { maxHeaderBytes: 65_536, maxMimeDepth: 20, maxMimeParts: 10 };
const SESSION: AuthSession = { mailFrom: "news@brand.example", helo: "mail.brand.example", remoteIp: "192.0.2.1", mta: "mx.postroom.test" };
const TRACE = "Received: from mail.brand.example by mx.postroom.test; Sat, 28 Nov 2026 03:00:00 +0000\r\n";
const MESSAGE = ORDER_MESSAGE;

let dns: TestDnsServer;
let signed = "";
beforeAll(async () => {
  dns = await TestDnsServer.start();
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const record = `v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`;
  dns.set("s1._domainkey.brand.example", [{ type: "TXT", data: record.match(/.{1,255}/g)! }]);
  dns.set("brand.example", [{ type: "TXT", data: "v=spf1 ip4:192.0.2.1 -all" }]);
  dns.set("_dmarc.brand.example", [{ type: "TXT", data: "v=DMARC1; p=reject" }]);
  const rsa = { selector: "s1", keyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString() };
  signed =
    (await dkimSignatures({ raw: Buffer.from(MESSAGE), domain: "brand.example", rsa, ed25519: null, signTimeMs: Date.now() })) + MESSAGE;
});
afterAll(() => dns.stop());

const traced = (message: string) => Buffer.from(TRACE + message);
const checker = () => new AuthChecker(createResolver({ servers: [dns.address], timeoutMs: 500 }), 0);

// One worker: SPF and DKIM on it, the parse and DMARC here. Two: all of it on a worker.
describe.each([1, 2])("ExtractPool.examine with %p worker(s)", (workers) => {
  let pool: ExtractPool;
  /** Lookups made by the main thread's resolver: none while the worker checks. */
  const mainLookups: string[] = [];
  beforeAll(() => {
    const resolver = createResolver({ servers: [dns.address], timeoutMs: 500 });
    const counted = { ...resolver, resolve: (name: string, type: string) => (mainLookups.push(name), resolver.resolve(name, type)) };
    pool = new ExtractPool(workers, silentLogger, new AuthChecker(counted, 0));
  });
  afterAll(() => pool.close());

  test("a signed message: the worker's verdicts are the main thread's, all pass", async () => {
    const onWorker = await pool.examine(traced(signed), LIMITS, TRACE.length, SESSION);
    expect(pool.workerCount).toBe(workers);
    const here = await examineMessage(
      { raw: traced(signed), limits: LIMITS, traceBytes: TRACE.length, session: SESSION },
      { auth: checker(), extract: extractMessage },
    );
    expect(onWorker.auth).toEqual(here.auth);
    expect(onWorker.auth.spf).toEqual({ result: "pass", domain: "brand.example" });
    expect(onWorker.auth.dkim).toEqual({ result: "pass", signatures: [{ domain: "brand.example", selector: "s1", result: "pass" }] });
    expect(onWorker.auth.dmarc).toEqual({ result: "pass", domain: "brand.example", policy: "reject" });
    expect(onWorker.extracted.subject).toBe("Your order");
    expect(onWorker.extracted.messageId).toBe("order-1@brand.example");
    // Here: DMARC's lookups with one worker (its record, then the organisational domain's), none with two.
    if (workers === 1) expect(mainLookups).toEqual(["_dmarc.brand.example", "_dmarc.example"]);
    else expect(mainLookups).toEqual([]);
  });

  test("an unsigned message: SPF and DMARC pass, no DKIM signature", async () => {
    const { auth } = await pool.examine(traced(MESSAGE), LIMITS, TRACE.length, SESSION);
    expect(auth).toEqual({
      spf: { result: "pass", domain: "brand.example" },
      dkim: { result: "none", signatures: [] },
      dmarc: { result: "pass", domain: "brand.example", policy: "reject" },
    });
  });

  test("a body changed after signing fails DKIM on the worker too", async () => {
    const { auth } = await pool.examine(traced(signed.replace("has shipped", "was lost")), LIMITS, TRACE.length, SESSION);
    expect(auth.dkim.result).toBe("fail");
    expect(auth.spf.result).toBe("pass");
  });

  test("a message the parse refuses comes back as its refusal", async () => {
    const parts = Array.from({ length: 12 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join("");
    const raw = traced(`From: a@brand.example\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`);
    const err = await pool.examine(raw, LIMITS, TRACE.length, SESSION).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageRefused);
    expect((err as MessageRefused).reply.code).toBe(554);
  });
});

test("a resolver a worker cannot make keeps the checks on the main thread", async () => {
  const asked: string[] = [];
  const fake = {
    resolve: async (name: string) => {
      asked.push(name);
      throw new DnsError("ENOTFOUND", name);
    },
  } as unknown as DnsResolver;
  const pool = new ExtractPool(1, silentLogger, new AuthChecker(fake, 0));
  try {
    const { auth } = await pool.examine(traced(MESSAGE), LIMITS, TRACE.length, SESSION);
    expect(auth.spf.result).toBe("none");
    expect(asked).toContain("brand.example");
  } finally {
    await pool.close();
  }
});
