import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimSignatures, type SignRequest } from "../../src/domains/dkim.ts";
import { SignPool, signWorkerCount } from "../../src/domains/sign-pool.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { eventually } from "../helpers/sink.ts";

const pem = (type: "rsa" | "ed25519") =>
  (type === "rsa" ? generateKeyPairSync("rsa", { modulusLength: 2048 }) : generateKeyPairSync("ed25519")).privateKey
    .export({ type: "pkcs8", format: "pem" })
    .toString();
const request = (i: number): SignRequest => ({
  raw: Buffer.from(`From: a@example.com\r\nTo: b@example.org\r\nSubject: message ${i}\r\n\r\nbody ${i}\r\n`),
  domain: "example.com",
  rsa: { selector: "rsa1", keyPem: RSA },
  ed25519: { selector: "ed1", keyPem: ED },
  signTimeMs: Date.parse("2026-11-22T12:00:00Z"),
});
const RSA = pem("rsa");
const ED = pem("ed25519");

describe("signWorkerCount: every core but the main thread's, at most four", () => {
  test.each([
    [1, 0],
    [2, 1],
    [4, 3],
    [16, 4],
  ])("%p cores → %p workers", (cores, workers) => expect(signWorkerCount(cores)).toBe(workers));
});

describe("SignPool", () => {
  test("a worker's signatures are the main thread's, byte for byte (both algorithms are deterministic)", async () => {
    const pool = new SignPool(1, createLogger({ sink: () => {} }));
    try {
      // Started on demand (warm() runs when a sending domain is looked up), not before.
      expect(pool.running).toBe(0);
      pool.warm();
      expect(pool.running).toBe(1);
      const fromPool = await Promise.all([0, 1, 2, 3].map((i) => pool.sign(request(i))));
      expect(pool.running).toBe(1);
      for (const [i, s] of fromPool.entries()) {
        expect(s).toBe(await dkimSignatures(request(i)));
        expect(s).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256;[\s\S]*\r\nDKIM-Signature: v=1; a=ed25519-sha256;/);
      }
    } finally {
      pool.close();
    }
  });

  test("a worker that cannot start leaves signing to the main thread: same signatures, an error logged", async () => {
    const lines: string[] = [];
    const pool = new SignPool(1, createLogger({ sink: (l) => lines.push(l) }), new URL("./no-such-worker.ts", import.meta.url).href);
    try {
      const signatures = await Promise.all([0, 1].map((i) => pool.sign(request(i))));
      expect(signatures[1]).toBe(await dkimSignatures(request(1)));
      // Later requests too, once the pool has given up on workers (and said so).
      await eventually(
        () => lines.some((l) => l.includes("signing worker failed again; signing on the main thread from now on")),
        5000,
        "the pool giving up",
      );
      expect(await pool.sign(request(2))).toBe(await dkimSignatures(request(2)));
    } finally {
      pool.close();
    }
  });
});
