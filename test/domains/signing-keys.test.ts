import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BoundedCache } from "../../src/lib/bounded-cache.ts";
import { encryptSecret } from "../../src/domains/keys.ts";
import { createSendingDomainRepo } from "../../src/domains/sending-domains.repo.ts";
import type { SendingDomain } from "../../src/domains/sending-domain.ts";
import { DomainService } from "../../src/domains/service.ts";
import { SigningKeyCache } from "../../src/domains/signing-keys.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("BoundedCache: least recently used first out", () => {
  test.each([
    // operations, keys left (oldest first)
    [
      ["set a", "set b", "set c"],
      ["b", "c"],
    ],
    [
      ["set a", "set b", "get a", "set c"],
      ["a", "c"],
    ],
    [
      ["set a", "set b", "set a", "set c"],
      ["a", "c"],
    ],
    [
      ["set a", "set b", "delete a", "set c"],
      ["b", "c"],
    ],
    [
      ["set a", "get z", "set b"],
      ["a", "b"],
    ],
    [["set a", "set b", "clear"], []],
    [
      ["set a", "set b", "make a", "make c"],
      ["a", "c"],
    ],
  ])("%j → %j", (ops, left) => {
    const cache = new BoundedCache<string, number>(2);
    for (const op of ops) {
      const [verb, key] = op.split(" ") as [string, string];
      if (verb === "set") cache.set(key, 1);
      else if (verb === "get") cache.get(key);
      else if (verb === "make") cache.getOrMake(key, () => 1);
      else if (verb === "delete") cache.delete(key);
      else cache.clear();
    }
    expect(cache.keys()).toEqual(left);
  });

  test("getOrMake makes a value only when it is absent", () => {
    const cache = new BoundedCache<string, string>(2);
    const made: string[] = [];
    const make = (k: string) => (made.push(k), k.toUpperCase());
    expect([cache.getOrMake("a", make), cache.getOrMake("a", make), cache.getOrMake("b", make)]).toEqual(["A", "A", "B"]);
    expect(made).toEqual(["a", "b"]);
  });

  test("a bound below one is refused", () => {
    expect(() => new BoundedCache(0)).toThrow(RangeError);
  });
});

describe("SigningKeyCache", () => {
  const key = randomBytes(32);
  const domain = (id: string, rsa: string, ed: string): SendingDomain =>
    ({ id, dkimPrivateKeyEnc: encryptSecret(rsa, key), ed25519PrivateKeyEnc: encryptSecret(ed, key) }) as SendingDomain;

  test("decrypts once per domain, afresh when the stored keys change, and forgets on request", () => {
    const cache = new SigningKeyCache(key, 2);
    const d1 = domain("d1", "rsa one", "ed one");
    expect(cache.keysFor(d1).rsaPem).toBe("rsa one");
    expect(cache.keysFor(d1).ed25519Pem()).toBe("ed one");
    // The same encrypted keys (a fresh copy of the row): the entry serves.
    expect(cache.keysFor({ ...d1 }).rsaPem).toBe("rsa one");
    // New keys stored for the domain: the old plaintext is not used.
    const rotated = domain("d1", "rsa two", "ed two");
    expect(cache.keysFor(rotated).rsaPem).toBe("rsa two");
    expect(cache.keysFor(rotated).ed25519Pem()).toBe("ed two");
    cache.forget("d1");
    expect(cache.cachedIds()).toEqual([]);
  });

  test("holds at most its bound of domains", () => {
    const cache = new SigningKeyCache(key, 2);
    for (const id of ["a", "b", "c"]) cache.keysFor(domain(id, `rsa ${id}`, `ed ${id}`));
    expect(cache.cachedIds()).toEqual(["b", "c"]);
  });
});

describe("DomainService with its repository: the cached domain and keys follow every write", () => {
  test("a deleted domain is neither found nor signed with, and its keys leave memory", async () => {
    const dir = tempDir();
    const store = openStore(dir.path);
    const repo = createSendingDomainRepo(store.main);
    const config = { domains: { recheckUnverifiedMs: 60_000, recheckVerifiedMs: 60_000, graceMs: 60_000 } } as never;
    const service = new DomainService({
      repo,
      resolver: {} as never,
      clock: { nowMs: () => Date.now() },
      logger: silentLogger,
      config: () => config,
      encryptionKey: randomBytes(32),
    });
    const raw = Buffer.from("From: a@example.com\r\nTo: b@example.org\r\nSubject: hi\r\n\r\nbody\r\n");
    const d = await service.create("acct", "example.com");
    const found = await service.domainFor("acct", "mail.example.com");
    expect(found?.id).toBe(d.id);
    const signed = await service.sign(found!, raw);
    expect(signed.toString()).toStartWith("DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com;");
    expect(service.cachedKeyIds()).toEqual([d.id]);
    expect(await repo.softDelete("acct", d.id, Date.now())).toBe(true);
    expect(service.cachedKeyIds()).toEqual([]);
    expect(await service.domainFor("acct", "mail.example.com")).toBeNull();
    // Added again (new keys): found again, and the new key signs.
    const again = await service.create("acct", "example.com");
    expect((await service.domainFor("acct", "example.com"))?.id).toBe(again.id);
    store.close();
    dir.remove();
  });
});
