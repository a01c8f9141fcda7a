// Destinations (issue 29): which domains share a window, which replies are throttles, how a
// pause grows. Pure functions, table tests.
import { describe, expect, test } from "bun:test";
import { BUILT_IN_DESTINATIONS } from "../../../src/outbound/destinations/builtin.ts";
import { Pacer } from "../../../src/outbound/destinations/pacer.ts";
import {
  type DestinationPause,
  type DestinationRule,
  effectiveRules,
  isThrottleReply,
  isThrottleText,
  MAX_PAUSE_MS,
  mxMatches,
  resolveDestination,
  throttlePause,
} from "../../../src/outbound/destinations/rules.ts";

const rule = (name: string, mx: string[], extra: Partial<DestinationRule> = {}): DestinationRule => ({
  name,
  mx,
  maxConnections: null,
  rate: null,
  throttleReplies: [],
  pauseMs: 300_000,
  ...extra,
});

const RULES = effectiveRules([rule("gmail", [".google.com", ".googlemail.com"]), rule("corp", ["mx.corp.example"])], BUILT_IN_DESTINATIONS);

describe("resolveDestination", () => {
  test.each([
    // domain, MX hosts, name, window key
    ["gmail.com", ["gmail-smtp-in.l.google.com", "alt1.gmail-smtp-in.l.google.com"], "gmail", "rule gmail"],
    ["acme.test", ["ASPMX.L.GOOGLE.COM."], "gmail", "rule gmail"],
    ["old.test", ["aspmx.googlemail.com"], "gmail", "rule gmail"],
    ["corp.example", ["mx.corp.example"], "corp", "rule corp"],
    // A host name matches only itself, not what lies under it.
    ["sub.example", ["a.mx.corp.example"], "sub.example", "mx a.mx.corp.example"],
    // A suffix needs a label before it.
    ["google.com", ["google.com"], "google.com", "mx google.com"],
    ["outlook.com", ["outlook-com.olc.protection.outlook.com"], "microsoft", "rule microsoft"],
    ["yahoo.com", ["mta5.am0.yahoodns.net"], "yahoo", "rule yahoo"],
    ["aol.com", ["mx-aol.mail.gm0.yahoodns.net"], "yahoo", "rule yahoo"],
    ["icloud.com", ["mx01.mail.icloud.com", "mx02.mail.icloud.com"], "apple", "rule apple"],
    ["web.de", ["mx-ha03.web.de"], "gmx-webde", "rule gmx-webde"],
    ["gmx.de", ["mx00.emig.gmx.net"], "gmx-webde", "rule gmx-webde"],
    ["mail.ru", ["mxs.mail.ru"], "mailru", "rule mailru"],
    ["yandex.ru", ["mx.yandex.ru"], "yandex", "rule yandex"],
    // No rule: domains with the same MX host set share one window, whatever the order.
    ["a.test", ["mx2.host.test", "mx1.host.test"], "a.test", "mx mx1.host.test,mx2.host.test"],
    ["b.test", ["MX1.host.test.", "mx2.host.test"], "b.test", "mx mx1.host.test,mx2.host.test"],
  ])("%s with MX %j → %s (%s)", (domain, hosts, name, windowKey) => {
    const r = resolveDestination(domain, hosts, RULES);
    expect([r.name, r.windowKey]).toEqual([name, windowKey]);
  });

  test("MX hosts unknown (lookup failed, smarthost): the domain alone", () => {
    expect(resolveDestination("Example.ORG", null, RULES)).toEqual({ name: "example.org", windowKey: "domain example.org", rule: null });
  });

  test("a rule in the file with a built-in rule's name replaces it; the file's rules match first", () => {
    const mine = rule("google", [".example-relay.test"], { maxConnections: 2 });
    const rules = effectiveRules([mine], BUILT_IN_DESTINATIONS);
    expect(rules.filter((r) => r.name === "google")).toEqual([mine]);
    expect(resolveDestination("gmail.com", ["gmail-smtp-in.l.google.com"], rules).name).toBe("gmail.com");
    expect(resolveDestination("x.test", ["in.example-relay.test"], rules).rule).toBe(mine);
    expect(rules.length).toBe(BUILT_IN_DESTINATIONS.length);
  });

  test("mxMatches: exact names and dot-suffixes, any case, a trailing dot ignored", () => {
    expect(mxMatches("MX.Example.COM.", "mx.example.com")).toBe(true);
    expect(mxMatches("a.b.example.com", ".example.com")).toBe(true);
    expect(mxMatches("badexample.com", ".example.com")).toBe(false);
    expect(mxMatches("a.mx.example.com", "mx.example.com")).toBe(false);
  });
});

describe("isThrottleReply", () => {
  const google = BUILT_IN_DESTINATIONS.find((r) => r.name === "google")!;
  const microsoft = BUILT_IN_DESTINATIONS.find((r) => r.name === "microsoft")!;
  const yahoo = BUILT_IN_DESTINATIONS.find((r) => r.name === "yahoo")!;
  test.each([
    [
      google,
      421,
      "4.7.28 [203.0.113.42] Our system has detected an unusual rate of unsolicited mail originating from your IP address.",
      true,
    ],
    [google, 450, "4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages", false],
    [google, 550, "5.7.28 ... unusual rate of unsolicited mail", false],
    [microsoft, 451, "4.7.650 The mail server [203.0.113.10] has been temporarily rate limited due to IP reputation.", true],
    [microsoft, 421, "RP-001 The sending IP exceeded a rate limit", true],
    [microsoft, 451, "4.4.4 Mail received as unauthenticated", false],
    [yahoo, 421, "4.7.0 [TSS04] Messages from 203.0.113.1 temporarily deferred due to unexpected volume or user complaints", true],
    [yahoo, null, "connection refused", false],
  ] as const)("%#: %s %s %s → %s", (r, code, text, expected) => {
    expect(isThrottleReply(r, code, text)).toBe(expected);
  });
  test("no rule, no throttle", () => expect(isThrottleReply(null, 421, "4.7.28")).toBe(false));
  test.each([
    [microsoft, "mx1.outlook.com: 421 RP-002 The sending IP exceeded a connection-level rate limit", true],
    [microsoft, "mx1.outlook.com: connect ECONNREFUSED 203.0.113.5:25", false],
    [google, "gsmtp: 421-4.7.28 rate limited", true],
  ] as const)("why no connection could be had: %#", (r, text, expected) => {
    expect(isThrottleText(r, text)).toBe(expected);
  });
});

describe("throttlePause", () => {
  const at = (untilMs: number | null, pauseMs: number, source: DestinationPause["source"] = "throttle"): DestinationPause => ({
    destination: "gmail",
    source,
    reason: "421 4.7.28",
    pausedAtMs: 0,
    untilMs,
    pauseMs,
  });
  test.each([
    ["first throttle: the rule's pause", null, 1_000_000, { untilMs: 1_300_000, pauseMs: 300_000 }],
    ["paused already: not stretched", at(1_200_000, 300_000), 1_000_000, null],
    ["operator's pause: kept", at(null, 0, "operator"), 1_000_000, null],
    ["right after the last ended: doubled", at(1_000_000, 300_000), 1_100_000, { untilMs: 1_700_000, pauseMs: 600_000 }],
    ["doubling stops at 1 h", at(1_000_000, 2_400_000), 1_000_001, { untilMs: 1_000_001 + MAX_PAUSE_MS, pauseMs: MAX_PAUSE_MS }],
    ["long after the last: from the start", at(1_000_000, 300_000), 1_400_000, { untilMs: 1_700_000, pauseMs: 300_000 }],
  ] as const)("%s", (_what, prior, nowMs, expected) => {
    expect(throttlePause(prior, 300_000, nowMs)).toEqual(expected);
  });
});

describe("Pacer", () => {
  test("600/min books one slot every 100 ms; a slot further off than the longest wait is not booked", () => {
    const p = new Pacer();
    const rate = { limit: 600, windowMs: 60_000 };
    expect([0, 1, 2].map(() => p.book("gmail from default", rate, 1000))).toEqual([0, 100, 200]);
    expect(p.backlogMs("gmail from default", 1000)).toBe(300);
    expect(p.book("gmail from default", rate, 1000, 250)).toBeNull();
    expect(p.book("other from default", rate, 1000)).toBe(0);
    expect(p.book("gmail from default", null, 1000)).toBe(0);
    // Later, the slots booked are past: at once again.
    expect(p.book("gmail from default", rate, 5000)).toBe(0);
  });
});
