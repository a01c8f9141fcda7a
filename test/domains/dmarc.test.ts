import { describe, expect, test } from "bun:test";
import { dmarcHosts, dmarcRecordAt, domainHealth as health, NO_DMARC } from "../../src/domains/dmarc.ts";

const HOSTS = { dkim: "s1._domainkey.example.com", mta: "mta.example.com", bounce: "bounces.example.net" };
const domainHealth = (domain: string, ...rest: Parameters<typeof health> extends [string, unknown, ...infer R] ? R : never) =>
  health(domain, HOSTS, ...rest);

const H = "_dmarc.example.com";

describe("dmarcRecordAt", () => {
  test.each([
    [[["v=DMARC1; p=none"]], true, "none"],
    [[["v=DMARC1; p=quarantine; pct=100"]], true, "quarantine"],
    [[["v=DMARC1; p=REJECT"]], true, "reject"],
    [[["v=DMARC1;", " p=reject"]], true, "reject"],
    [[["v=spf1 -all"], ["v=DMARC1; p=quarantine"]], true, "quarantine"],
    [[["v=DMARC1; p=reject; sp=none"]], false, "none"],
    [[["v=DMARC1; p=reject; sp=none"]], true, "reject"],
    [[["v=DMARC1; p=bogus"]], true, "missing"],
    [[["v=DMARC1; p=bogus; rua=mailto:r@example.com"]], true, "none"],
    [[["v=DMARC1; p=none"], ["v=DMARC1; p=reject"]], true, "missing"],
  ])("%j (own %s) → %s", (records, own, policy) => expect(dmarcRecordAt(H, records, own)?.policy).toBe(policy as never));

  test("no DMARC record: look further up", () => {
    expect(dmarcRecordAt(H, [["v=spf1 -all"]], true)).toBeNull();
    expect(dmarcRecordAt(H, [], true)).toBeNull();
  });

  test("strict alignment tags", () => {
    expect(dmarcRecordAt(H, [["v=DMARC1; p=reject; adkim=s; aspf=S"]], true)).toMatchObject({ strictDkim: true, strictSpf: true });
  });

  test("the tree walk stops at two labels", () => {
    expect(dmarcHosts("a.b.example.com")).toEqual(["_dmarc.a.b.example.com", "_dmarc.b.example.com", "_dmarc.example.com"]);
    expect(dmarcHosts("example.com")).toEqual(["_dmarc.example.com"]);
  });
});

describe("domainHealth", () => {
  const all = { dkim: true, ed25519: true, return_path: true, spf: true };
  const quarantine = dmarcRecordAt(H, [["v=DMARC1; p=quarantine"]], true)!;

  test("everything right: nothing to fix", () => {
    expect(domainHealth("example.com", quarantine, all, {})).toEqual({
      dmarc: "quarantine",
      dmarc_record: "v=DMARC1; p=quarantine",
      dkim_aligned: true,
      return_path_aligned: true,
      fix: { dmarc: null, dkim_aligned: null, return_path_aligned: null },
      unknown: null,
    });
  });

  test.each([
    ["no DMARC record", NO_DMARC, all, "dmarc", "publish a TXT record at _dmarc.example.com"],
    ["p=none", dmarcRecordAt(H, [["v=DMARC1; p=none"]], true)!, all, "dmarc", "p=quarantine"],
    [
      "no DKIM record",
      quarantine,
      { ...all, dkim: false, ed25519: false },
      "dkim_aligned",
      "publish the TXT record at s1._domainkey.example.com",
    ],
    [
      "no return-path CNAME",
      quarantine,
      { ...all, return_path: false },
      "return_path_aligned",
      "publish the CNAME mta.example.com → bounces.example.net",
    ],
    ["SPF fails", quarantine, { ...all, spf: false }, "return_path_aligned", "must authorise every sending IP"],
    ["aspf=s", dmarcRecordAt(H, [["v=DMARC1; p=reject; aspf=s"]], true)!, all, "return_path_aligned", "remove aspf=s"],
  ] as const)("%s", (_, dmarc, checks, point, text) => {
    const h = domainHealth("example.com", dmarc, checks, {});
    expect(h.fix[point]).toContain(text);
    const others = Object.entries(h.fix).filter(([k]) => k !== point);
    expect(others.every(([, v]) => v === null)).toBe(true);
    if (point !== "dmarc") expect(h[point]).toBe(false);
  });

  test("the Ed25519 key alone does not align DKIM: large providers verify RSA only", () => {
    expect(domainHealth("example.com", quarantine, { ...all, dkim: false }, {}).dkim_aligned).toBe(false);
  });
});
