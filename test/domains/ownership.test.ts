// Who may take a domain (domains/ownership.ts): the decision as a table (the domain, the
// claimant, the holders, the server's names → allowed, the server's own, or held by
// another account with the domain a proof must be published for), and the TXT proof.
import { describe, expect, test } from "bun:test";
import {
  decideDomainClaim,
  proofPublished,
  proofRecord,
  returnPathOwners,
  type DomainHolding,
  type DomainUse,
} from "../../src/domains/ownership.ts";

const server = { inboundDomain: "In.Postroom.Test.", bounceHost: "bounces.postroom.test", hostname: "mx.postroom.test" };
const custom = (accountId: string, domain: string): DomainHolding => ({ kind: "custom_domain", accountId, domain });
const sending = (accountId: string, domain: string): DomainHolding => ({ kind: "sending_domain", accountId, domain });

const OURS = "; mail to it is the server's, so no account can have it. Use a domain of your own";
type Expected = "allowed" | { server: string } | { held: [string, string][] };
const summary = (domain: string, use: DomainUse, holdings: DomainHolding[]): Expected => {
  const d = decideDomainClaim({ domain, use, claimantId: "a", holdings, server });
  if (d.kind === "allowed") return "allowed";
  if (d.kind === "server_domain") return { server: d.reason };
  return { held: d.conflicts.map((c) => [c.heldDomain, c.reason]) };
};

describe("decideDomainClaim", () => {
  test.each<[string, string, DomainUse, DomainHolding[], Expected]>([
    ["nobody holds it", "shop.example", "custom_domain", [], "allowed"],
    ["the claimant's own sending domain, as a custom domain", "shop.example", "custom_domain", [sending("a", "shop.example")], "allowed"],
    ["the claimant's own custom domain, as a sending domain", "shop.example", "sending_domain", [custom("a", "shop.example")], "allowed"],
    ["the claimant's own mta. host", "mta.shop.example", "custom_domain", [sending("a", "shop.example")], "allowed"],
    [
      "another account's sending domain",
      "shop.example",
      "custom_domain",
      [sending("b", "shop.example")],
      { held: [["shop.example", "shop.example is a sending domain of another account"]] },
    ],
    [
      "another account's mta. host",
      "mta.shop.example",
      "custom_domain",
      [sending("b", "shop.example")],
      { held: [["shop.example", "mta.shop.example is the return-path host of a sending domain of another account (shop.example)"]] },
    ],
    [
      "the return-path host of mail from a name under another account's sending domain",
      "mta.news.shop.example",
      "custom_domain",
      [sending("b", "shop.example")],
      { held: [["shop.example", "mta.news.shop.example is the return-path host of a sending domain of another account (shop.example)"]] },
    ],
    [
      "mta. under a name that is not another's sending domain",
      "mta.news.shop.example",
      "custom_domain",
      [sending("b", "news.other.example"), custom("b", "news.shop.example")],
      "allowed",
    ],
    [
      "another account's custom domain",
      "shop.example",
      "custom_domain",
      [custom("b", "shop.example")],
      { held: [["shop.example", "shop.example is a custom domain of another account"]] },
    ],
    [
      "another account's custom domain, as a sending domain",
      "shop.example",
      "sending_domain",
      [custom("b", "shop.example")],
      { held: [["shop.example", "shop.example is a custom domain of another account"]] },
    ],
    [
      "another account's sending domain, as a sending domain (each verifies its own keys)",
      "shop.example",
      "sending_domain",
      [sending("b", "shop.example")],
      "allowed",
    ],
    ["a name under another account's custom domain", "eu.shop.example", "custom_domain", [custom("b", "shop.example")], "allowed"],
    [
      "held as both by two accounts: one conflict per domain to prove",
      "shop.example",
      "custom_domain",
      [custom("b", "shop.example"), sending("c", "shop.example"), sending("a", "shop.example")],
      { held: [["shop.example", "shop.example is a custom domain of another account"]] },
    ],
    [
      "the inbound domain (configured with capitals and a final dot)",
      "in.postroom.test",
      "custom_domain",
      [],
      { server: `in.postroom.test is this server's own domain (the inbound domain)${OURS}` },
    ],
    [
      "a name under the inbound domain",
      "x.in.postroom.test",
      "custom_domain",
      [],
      { server: `x.in.postroom.test is this server's own domain (under the inbound domain in.postroom.test)${OURS}` },
    ],
    [
      "the bounce host",
      "bounces.postroom.test",
      "custom_domain",
      [],
      { server: `bounces.postroom.test is this server's own domain (the bounce host)${OURS}` },
    ],
    [
      "a name under the bounce host",
      "mta.bounces.postroom.test",
      "custom_domain",
      [sending("b", "bounces.postroom.test")],
      { server: `mta.bounces.postroom.test is this server's own domain (under the bounce host bounces.postroom.test)${OURS}` },
    ],
    [
      "the hostname",
      "mx.postroom.test",
      "custom_domain",
      [],
      { server: `mx.postroom.test is this server's own domain (its hostname)${OURS}` },
    ],
    ["the parent of the server's names is not the server's", "postroom.test", "custom_domain", [], "allowed"],
  ])("%s", (_what, domain, use, holdings, expected) => {
    expect(summary(domain, use, holdings)).toEqual(expected);
  });

  test("every record in the way of a conflict is listed, so a proven claim removes them all", () => {
    const d = decideDomainClaim({
      domain: "shop.example",
      use: "custom_domain",
      claimantId: "a",
      holdings: [custom("b", "shop.example"), sending("c", "shop.example"), sending("a", "shop.example")],
      server,
    });
    expect(d).toEqual({
      kind: "held",
      conflicts: [
        {
          heldDomain: "shop.example",
          reason: "shop.example is a custom domain of another account",
          holders: [custom("b", "shop.example"), sending("c", "shop.example")],
        },
      ],
    });
  });
});

test("returnPathOwners: the names whose sending domain mail has this return-path host", () => {
  expect(returnPathOwners("mta.news.shop.example")).toEqual(["news.shop.example", "shop.example"]);
  expect(returnPathOwners("mta.shop.example")).toEqual(["shop.example"]);
  expect(returnPathOwners("mta.example")).toEqual([]);
  expect(returnPathOwners("shop.example")).toEqual([]);
});

describe("the TXT proof", () => {
  const key = Buffer.alloc(32, 1);
  test("stable for an account and a domain, different for another account, domain or key", () => {
    const proof = proofRecord(key, "a000000000000001", "shop.example");
    expect(proof).toEqual({
      type: "TXT",
      host: "_postroom-verify.shop.example",
      value: expect.stringMatching(/^postroom-verify=[0-9a-f]{32}$/),
    });
    expect(proofRecord(key, "a000000000000001", "shop.example")).toEqual(proof);
    expect(proofRecord(key, "b000000000000002", "shop.example").value).not.toBe(proof.value);
    expect(proofRecord(key, "a000000000000001", "other.example").value).not.toBe(proof.value);
    expect(proofRecord(Buffer.alloc(32, 2), "a000000000000001", "shop.example").value).not.toBe(proof.value);
  });
  test("found only when one record is exactly the value (split strings joined)", () => {
    const proof = proofRecord(key, "a", "shop.example");
    const [head, tail] = [proof.value.slice(0, 20), proof.value.slice(20)];
    expect(proofPublished([["v=spf1 -all"], [head, tail]], proof)).toBe(true);
    expect(proofPublished([[proof.value]], proof)).toBe(true);
    expect(proofPublished([], proof)).toBe(false);
    expect(proofPublished([[`${proof.value}0`]], proof)).toBe(false);
    expect(proofPublished([[proofRecord(key, "b", "shop.example").value]], proof)).toBe(false);
  });
});
