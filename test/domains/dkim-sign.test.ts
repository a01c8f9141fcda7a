// Postroom's own DKIM signer (src/domains/dkim-sign.ts, dkim.ts). It reproduces RFC 8463's
// example signatures byte for byte (Ed25519 and RSA, deterministic both), and what it signs
// verifies with two independent verifiers: mailauth's and dkimpy (python3-dkim), also for
// 8-bit bodies, bare LF line ends and long headers.
import { describe, expect, test } from "bun:test";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { dkimVerify } from "mailauth/lib/dkim/verify";
import { dkimSignatures } from "../../src/domains/dkim.ts";
import { splitMessage } from "../../src/domains/dkim-canon.ts";
import { signatureValue, unsignedHeader } from "../../src/domains/dkim-sign.ts";
import { corpusPath } from "../helpers/corpus.ts";
import { dkimpyVerify } from "../helpers/dkimpy.ts";
import { ORDER_MESSAGE } from "../helpers/order-message.ts";
import { requireTools } from "../helpers/tools.ts";

describe("RFC 8463 section A's example, signed again with its keys", () => {
  const text = readFileSync(corpusPath("dkim/signed.eml"), "latin1");
  const { fields } = splitMessage(text);
  const [edHeader, rsaHeader] = fields.filter((f) => f.key === "dkim-signature");
  // h=from:to:subject:date:message-id:from:subject:date; the second from, subject and date are null.
  const covered = ["from", "to", "subject", "date", "message-id"].map((k) => fields.find((f) => f.key === k)!);
  const seed = Buffer.from(readFileSync(corpusPath("dkim/private-ec.key"), "utf8").trim(), "base64");
  const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
  const keys = {
    "ed25519-sha256": createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" }),
    "rsa-sha256": createPrivateKey(readFileSync(corpusPath("dkim/private-rsa.key"))),
  } as const;

  test.each([
    ["ed25519-sha256", () => edHeader!],
    ["rsa-sha256", () => rsaHeader!],
  ] as const)("%s: the same b= as the RFC's", (algorithm, header) => {
    const at = header().text.indexOf(" b=") + 3;
    const expected = header().text.slice(at).replace(/\s+/g, "");
    expect(signatureValue(covered, header().text.slice(0, at), algorithm, keys[algorithm])).toBe(expected);
  });
});

describe("the header", () => {
  const tags = {
    algorithm: "rsa-sha256" as const,
    domain: "brand.example",
    selector: "s2026",
    timeS: 1_795_000_000,
    bodyHash: "Lw99leMvS25bshXwU7S6IXLqqsU6uZ72HCbPfclGh1Y=",
    h: ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type", "Content-Transfer-Encoding", "From"],
  };

  test("folded: no line over 78 characters, every tag once, b= last and empty", () => {
    const header = unsignedHeader({ ...tags, domain: `${"sub.".repeat(12)}brand.example` });
    for (const line of header.split("\r\n")) expect(line.length).toBeLessThanOrEqual(78);
    const flat = header.replace(/\r\n /g, " ");
    expect(flat).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=(sub\.){12}brand\.example; s=s2026; t=1795000000; /);
    expect(flat).toMatch(/ bh=Lw99leMvS25bshXwU7S6IXLqqsU6uZ72HCbPfclGh1Y=; b=$/);
    expect(flat.match(/h=([^;]+);/)![1]!.replace(/ /g, "")).toBe(tags.h.join(":"));
  });

  test.each([
    ["d", { domain: "brand.example;x=y" }],
    ["d", { domain: "-brand.example" }],
    ["d", { domain: "brand example" }],
    ["s", { selector: "s1\r\nX-Injected: yes" }],
    ["s", { selector: "" }],
  ])("%s= that is not a DNS name is refused: %j", (tag, change) => {
    expect(() => unsignedHeader({ ...tags, ...change })).toThrow(new RegExp(`DKIM signing failed: ${tag}=`));
  });
});

function keyPair(type: "rsa" | "ed25519") {
  const { privateKey, publicKey } = type === "rsa" ? generateKeyPairSync("rsa", { modulusLength: 2048 }) : generateKeyPairSync("ed25519");
  const der = publicKey.export({ type: "spki", format: "der" });
  // An Ed25519 record holds the raw 32-byte key, the end of its SPKI (RFC 8463 section 4.2).
  const p = (type === "rsa" ? der : der.subarray(der.length - 32)).toString("base64");
  return { pem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), record: `v=DKIM1; k=${type}; p=${p}` };
}
const rsa = keyPair("rsa");
const ed = keyPair("ed25519");
const RECORDS = { "rsa._domainkey.brand.example": rsa.record, "ed._domainkey.brand.example": ed.record };

async function signed(message: string | Buffer): Promise<Buffer> {
  const raw = Buffer.from(message as string, typeof message === "string" ? "latin1" : undefined);
  const signatures = await dkimSignatures({
    raw,
    domain: "brand.example",
    rsa: { selector: "rsa", keyPem: rsa.pem },
    ed25519: { selector: "ed", keyPem: ed.pem },
    signTimeMs: Date.now(),
  });
  return Buffer.concat([Buffer.from(signatures), raw]);
}

/** What the SMTP client puts on the wire: every bare LF as CRLF. */
const onTheWire = (b: Buffer) => Buffer.from(b.toString("latin1").replace(/\r?\n/g, "\r\n"), "latin1");

async function mailauthVerdicts(message: Buffer): Promise<string[]> {
  const resolver = async (name: string) => {
    const record = RECORDS[name as keyof typeof RECORDS];
    if (!record) throw Object.assign(new Error("no record"), { code: "ENOTFOUND" });
    return [[record]];
  };
  const result = await dkimVerify(message, { resolver } as never);
  return result.results.map((r) => r.status.result);
}

const MESSAGES: [string, string | Buffer][] = [
  ["an order message", ORDER_MESSAGE],
  [
    "an 8-bit UTF-8 body and a folded subject",
    Buffer.from(ORDER_MESSAGE.replace("\r\n\r\n", "\r\n\tmore of the subject\r\n\r\nCafé — ünïcödé  \t\r\n")),
  ],
  ["bare LF line ends", ORDER_MESSAGE.replace(/\r\n/g, "\n")],
  ["trailing blank lines and spaces", `${ORDER_MESSAGE}   \r\n\r\n\r\n`],
  ["two To fields, both signed", ORDER_MESSAGE.replace(/^To: /m, "To: other@example.org\r\nTo: ")],
];

describe("mailauth's verifier", () => {
  test.each(MESSAGES)("%s: both signatures pass, and one changed byte of the body breaks them", async (_, message) => {
    const wire = onTheWire(await signed(message));
    expect(await mailauthVerdicts(wire)).toEqual(["pass", "pass"]);
    const changed = Buffer.from(wire);
    changed[changed.length - 3] = changed[changed.length - 3]! ^ 1;
    // mailauth calls a body hash that does not match "neutral" (RFC 6376 section 6.3).
    expect(await mailauthVerdicts(changed)).toEqual(["neutral", "neutral"]);
  });
});

describe("dkimpy (python3-dkim)", () => {
  for (const [name, message] of MESSAGES)
    requireTools("python3-dkim")(`${name}: both signatures valid`, async () => {
      const wire = onTheWire(await signed(message));
      const verdicts = dkimpyVerify(wire, RECORDS).map((r) => [r.algorithm, r.valid]);
      expect(verdicts.sort()).toEqual([
        ["ed25519-sha256", true],
        ["rsa-sha256", true],
      ]);
    });
});

test("a message without From is refused: a signature without it fails every verifier", async () => {
  await expect(signed("To: a@example.org\r\nSubject: x\r\n\r\nbody\r\n")).rejects.toThrow(
    /DKIM signing failed: the message has no From header/,
  );
});
