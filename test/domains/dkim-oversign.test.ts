// Oversigning: our DKIM signatures list From once more in h= than the message has, so a From
// header added after signing breaks them (RFC 6376 section 8.15) instead of riding on a valid
// signature. Signed by src/domains/dkim.ts, verified by the inbound verifier (mailauth
// through our resolver, the key served by a real DNS server).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimSignatures, OVERSIGNED_HEADERS } from "../../src/domains/dkim.ts";
import { AuthChecker } from "../../src/inbound/parse/auth-checks.ts";
import { extractMessage } from "../../src/inbound/parse/extract.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ORDER_MESSAGE } from "../helpers/order-message.ts";

const DOMAIN = "brand.example";
const SELECTOR = "s2026";
const MESSAGE = ORDER_MESSAGE;

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
let dns: TestDnsServer;
let signed = "";

beforeAll(async () => {
  dns = await TestDnsServer.start();
  const p = publicKey.export({ type: "spki", format: "der" }).toString("base64");
  // A TXT string holds at most 255 bytes: the 2048-bit key's record is cut into several.
  const record = `v=DKIM1; k=rsa; p=${p}`;
  dns.set(`${SELECTOR}._domainkey.${DOMAIN}`, [{ type: "TXT", data: record.match(/.{1,255}/g)! }]);
  const signatures = await dkimSignatures({
    raw: Buffer.from(MESSAGE),
    domain: DOMAIN,
    rsa: { selector: SELECTOR, keyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString() },
    ed25519: null,
    signTimeMs: Date.now(),
  });
  signed = signatures + MESSAGE;
});
afterAll(() => dns.stop());

async function dkimResult(message: string): Promise<string> {
  const raw = Buffer.from(message);
  const { facts } = await extractMessage(raw, { maxHeaderBytes: 65_536, maxMimeDepth: 20, maxMimeParts: 100 });
  const checker = new AuthChecker(createResolver({ servers: [dns.address], timeoutMs: 500 }), 0);
  const auth = await checker.check(
    raw,
    { mailFrom: "bounce@brand.example", helo: "mail.brand.example", remoteIp: "192.0.2.1", mta: "mx.postroom.test" },
    facts,
  );
  return auth.dkim.result;
}

test("h= lists From once more than the message has it, and the signature verifies", async () => {
  expect(OVERSIGNED_HEADERS).toEqual(["From"]);
  const h = /\bh=([^;]+);/.exec(signed)![1]!.replace(/\s+/g, "").toLowerCase().split(":");
  expect(h.filter((name) => name === "from")).toEqual(["from", "from"]);
  expect(await dkimResult(signed)).toBe("pass");
});

test("a From header added after signing breaks the signature", async () => {
  // Added above the original, where a mail client reads the sender from.
  const forged = signed.replace(
    "From: News <news@brand.example>",
    "From: Support <support@evil.example>\r\nFrom: News <news@brand.example>",
  );
  expect(forged).not.toBe(signed);
  expect(await dkimResult(forged)).toBe("fail");
});
