// src/domains/dkim.ts parses each private key once (issue 38): a 2048-bit RSA PEM costs
// about 70 µs to parse, a tenth of the signature, and mailauth's signer parsed it for every
// message.
// The signatures made with the parsed keys must still verify, a rotated key must be used at
// once, and a key that cannot be read must still fail the signing.
import { expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimVerify } from "mailauth/lib/dkim/verify";
import { dkimSignatures, MAX_PARSED_SIGNING_KEYS, privateKeyOf } from "../../src/domains/dkim.ts";
import { MAX_CACHED_SIGNING_KEYS } from "../../src/domains/signing-keys.ts";
import { ORDER_MESSAGE } from "../helpers/order-message.ts";

const DOMAIN = "brand.example";
const MESSAGE = Buffer.from(ORDER_MESSAGE);

function rsaKey() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    pem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    record: `v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`,
  };
}

/** mailauth's verifier with `records` (selector → TXT) as the DNS: the status of each signature. */
async function verify(signed: Buffer, records: Map<string, string>): Promise<string[]> {
  const resolver = async (name: string) => {
    const record = records.get(name.split("._domainkey.")[0]!);
    if (!record) throw Object.assign(new Error("no record"), { code: "ENOTFOUND" });
    return [[record]];
  };
  const result = await dkimVerify(signed, { resolver } as never);
  return result.results.map((r: { status: { result: string } }) => r.status.result);
}

const sign = (selector: string, pem: string) =>
  dkimSignatures({ raw: MESSAGE, domain: DOMAIN, rsa: { selector, keyPem: pem }, ed25519: null, signTimeMs: Date.now() });

test("a key is parsed once: the same PEM gives the same key object", () => {
  const { pem } = rsaKey();
  expect(privateKeyOf(pem)).toBe(privateKeyOf(pem));
  expect(privateKeyOf(pem).asymmetricKeyType).toBe("rsa");
  // Bounded by the decrypted keys the main thread keeps: two per sending domain.
  expect(MAX_PARSED_SIGNING_KEYS).toBe(2 * MAX_CACHED_SIGNING_KEYS);
});

test("signatures made with a parsed key verify, message after message, and a rotated key signs at once", async () => {
  const first = rsaKey();
  const rotated = rsaKey();
  const records = new Map([
    ["s1", first.record],
    ["s2", rotated.record],
  ]);
  for (let i = 0; i < 2; i++) {
    const signed = Buffer.concat([Buffer.from(await sign("s1", first.pem)), MESSAGE]);
    expect(await verify(signed, records)).toEqual(["pass"]);
  }
  const signed = Buffer.concat([Buffer.from(await sign("s2", rotated.pem)), MESSAGE]);
  expect(await verify(signed, records)).toEqual(["pass"]);
  // The rotated key's signature does not verify against the first key's record.
  expect(await verify(signed, new Map([["s2", first.record]]))).toEqual(["fail"]);
});

test("a key that cannot be read fails the signing", async () => {
  await expect(sign("bad", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")).rejects.toThrow(/DKIM signing failed/);
});
