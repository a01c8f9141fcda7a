import { describe, expect, test } from "bun:test";
import { decryptSecret, encryptSecret, newEd25519Key, newSelector } from "../../src/domains/keys.ts";
import { cnameVerdict, dkimRecordVerdict, nextState, sendingStatus, spfVerdict } from "../../src/domains/verification.ts";

const H = "s1._domainkey.example.com";

describe("dkimRecordVerdict", () => {
  test.each([
    [[["v=DKIM1; k=rsa; p=ABC"]], true, null],
    [[["v=DKIM1; k=rsa; p=A", "BC"]], true, null],
    [[["v=DKIM1; k=rsa; p=A B\tC "]], true, null],
    [[["v=spf1 -all"], ["v=DKIM1; p=ABC"]], true, null],
    [[], false, `no TXT record at ${H}`],
    [[["v=DKIM1; k=rsa; p=XYZ"]], false, `TXT at ${H} has a different key`],
    [[["v=DKIM1; k=rsa; p="]], false, `the DKIM key at ${H} is revoked (empty p=)`],
    [[["hello world"]], false, `the TXT record at ${H} is not a DKIM key record (no p=)`],
  ])("%j", (records, ok, reason) => expect(dkimRecordVerdict(H, records, "ABC")).toEqual({ ok, reason }));
});

describe("cnameVerdict and spfVerdict", () => {
  test.each([
    [["bounces.example.net"], true, null],
    [["Bounces.Example.NET."], true, null],
    [[], false, "no CNAME at mta.example.com; it must point at bounces.example.net"],
    [["other.example.net"], false, "the CNAME at mta.example.com points at other.example.net, not bounces.example.net"],
  ])("%j", (targets, ok, reason) => expect(cnameVerdict("mta.example.com", targets, "bounces.example.net")).toEqual({ ok, reason }));

  test("every sending address must pass", () => {
    expect(
      spfVerdict("mta.x", [
        { ip: "1.2.3.4", result: "pass" },
        { ip: "5.6.7.8", result: "pass" },
      ]).ok,
    ).toBe(true);
    expect(
      spfVerdict("mta.x", [
        { ip: "1.2.3.4", result: "pass" },
        { ip: "5.6.7.8", result: "softfail" },
      ]),
    ).toEqual({ ok: false, reason: "the SPF policy reached at mta.x does not authorise 5.6.7.8 (softfail)" });
    expect(spfVerdict("mta.x", [])).toEqual({
      ok: false,
      reason:
        "outbound.sending_ips is empty: the operator has not set the addresses mail leaves from, so no SPF record is offered and SPF cannot be checked",
    });
  });
});

describe("nextState and sendingStatus: verification, grace, loss", () => {
  const H1 = 3_600_000;
  const schedule = { unverifiedMs: 10 * 60_000, verifiedMs: 24 * H1, graceMs: 72 * H1, jitter: 0 };
  const all = { dkim: true, ed25519: false, return_path: true, spf: true };
  const broken = { ...all, dkim: false };

  test("first success verifies; the next check is a day later", () => {
    const s = nextState({ verifiedAtMs: null, failingSinceMs: null }, all, {}, 1000, schedule);
    expect(s).toEqual({
      verifiedAtMs: 1000,
      failingSinceMs: null,
      nextCheckAtMs: 1000 + 24 * H1,
      events: [{ kind: "verified", details: {} }],
    });
    expect(sendingStatus(s, 2000, schedule.graceMs)).toBe("verified");
  });

  test("a verified domain that fails enters the grace period, then loses verification", () => {
    const failing = nextState({ verifiedAtMs: 1000, failingSinceMs: null }, broken, { dkim: "gone" }, 5000, schedule);
    expect(failing).toMatchObject({ verifiedAtMs: 1000, failingSinceMs: 5000, nextCheckAtMs: 5000 + 10 * 60_000 });
    expect(failing.events[0]!.kind).toBe("failing");
    expect(sendingStatus(failing, 5000 + 71 * H1, schedule.graceMs)).toBe("grace");
    expect(sendingStatus(failing, 5000 + 72 * H1, schedule.graceMs)).toBe("unverified");
    const lost = nextState(failing, broken, { dkim: "gone" }, 5000 + 72 * H1, schedule);
    expect(lost).toMatchObject({ verifiedAtMs: null, failingSinceMs: null, events: [{ kind: "verification_lost" }] });
  });

  test("a failing domain that recovers in time keeps its verification", () => {
    const recovered = nextState({ verifiedAtMs: 1000, failingSinceMs: 5000 }, all, {}, 6000, schedule);
    expect(recovered).toMatchObject({ verifiedAtMs: 1000, failingSinceMs: null, events: [{ kind: "recovered" }] });
  });

  test("checks are spread by the jitter", () => {
    const next = (r: number) =>
      nextState({ verifiedAtMs: null, failingSinceMs: null }, broken, {}, 0, { ...schedule, jitter: 0.1 }, () => r).nextCheckAtMs;
    expect(next(0)).toBe(9 * 60_000);
    expect(next(1)).toBe(11 * 60_000);
  });
});

describe("keys", () => {
  test("selectors are 12 characters, a letter first", () => {
    for (let i = 0; i < 50; i++) expect(newSelector()).toMatch(/^[a-z][a-z0-9]{11}$/);
  });
  test("private keys are encrypted with AES-GCM; a wrong key or a changed byte fails", () => {
    const key = Buffer.alloc(32, 7);
    const { privateKeyPem, publicKey } = newEd25519Key();
    expect(Buffer.from(publicKey, "base64")).toHaveLength(32);
    const sealed = encryptSecret(privateKeyPem, key);
    expect(sealed).not.toContain("PRIVATE");
    expect(decryptSecret(sealed, key)).toBe(privateKeyPem);
    expect(() => decryptSecret(sealed, Buffer.alloc(32, 8))).toThrow();
    const tampered = "v1:" + Buffer.from(Buffer.from(sealed.slice(3), "base64").map((b, i) => (i === 40 ? b ^ 1 : b))).toString("base64");
    expect(() => decryptSecret(tampered, key)).toThrow();
  });
});
