// The RFC 7208 (openspf.org, release 2014.04) SPF test suite through the production path:
// AuthChecker.check (mailauth with our resolver), with each scenario's zone data served by
// a real DNS server on loopback. One describe per scenario, one test per case.
//
// The suite (and its licence, rfc7208-tests.LICENSE) is stored unchanged in
// test/corpus/spf/ and read at test time.
//
// Zone data is loaded the way the suite's reference driver (pyspf's testspf.py) does:
// - names are case-insensitive and may end with a dot;
// - "SPF" records are served as type 99 and, when the name lists no TXT record at all,
//   also as TXT ("auto-magic duplication of SPF to TXT records", see the suite's header);
// - "TXT: NONE" lists a TXT record that does not exist: it only stops that duplication;
// - "TIMEOUT" makes every query for a type without a record listed before it go
//   unanswered, so the client times out;
// - a TXT (or SPF) given as a list is one record of several character-strings;
// - CNAMEs are followed by the server like a recursive resolver would.
// Only the result is compared: AuthChecker.check does not return the explanation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseMessage } from "../../../src/inbound/parse/parse.ts";
import { AuthChecker, messageFacts } from "../../../src/inbound/parse/auth-checks.ts";
import { createResolver } from "../../../src/lib/dns.ts";
import { TestDnsServer, type ZoneRecord } from "../../helpers/dns-server.ts";
import { corpusPath } from "../../helpers/corpus.ts";

/**
 * Cases that are not run, "<scenario description> / <case name>" → why. Every entry must
 * say what the suite expects, what that depends on and why our harness cannot serve it.
 * The last test checks that this table matches the cases that were left out exactly.
 */
const SKIPPED: Record<string, string> = {};

const SUITE_URL = new URL(`file://${corpusPath("spf/rfc7208-tests.yml")}`);
const RESULTS = ["none", "neutral", "pass", "fail", "softfail", "temperror", "permerror"] as const;

interface SuiteCase {
  description?: string;
  spec?: string | string[];
  helo: string;
  host: string;
  mailfrom: string;
  result: string | string[];
  explanation?: string;
}

interface Scenario {
  description: string;
  tests: Record<string, SuiteCase>;
  zonedata?: Record<string, unknown[] | null>;
}

const text = await Bun.file(SUITE_URL).text();
const parsed: unknown = Bun.YAML.parse(text);
// Bun.YAML.parse gives an array for a stream of several documents.
const scenarios = (Array.isArray(parsed) ? parsed : [parsed]) as Scenario[];

function asString(value: unknown, what: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw new Error(`${what}: expected a string, got ${JSON.stringify(value)}`);
}

function characterStrings(value: unknown, what: string): string | string[] {
  return Array.isArray(value) ? value.map((v) => asString(v, what)) : asString(value, what);
}

/** One name's record list of the suite as the records our test DNS server serves. */
function toRecords(name: string, items: readonly unknown[]): ZoneRecord[] {
  const records: ZoneRecord[] = [];
  const spfAsTxt: ZoneRecord[] = [];
  let listsTxt = false;
  for (const item of items) {
    if (item === "TIMEOUT") {
      records.push({ type: "TIMEOUT" });
      continue;
    }
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw new Error(`${name}: unsupported zone item ${JSON.stringify(item)}`);
    }
    for (const [type, value] of Object.entries(item)) {
      const what = `${name} ${type}`;
      switch (type) {
        case "TIMEOUT":
          if (value !== true) throw new Error(`${what}: unsupported value ${JSON.stringify(value)}`);
          records.push({ type: "TIMEOUT" });
          break;
        case "TXT":
          listsTxt = true;
          if (value !== "NONE") records.push({ type: "TXT", data: characterStrings(value, what) });
          break;
        case "SPF":
          if (value !== "NONE") records.push({ type: "SPF", data: characterStrings(value, what) });
          spfAsTxt.push({ type: "TXT", data: characterStrings(value, what) });
          break;
        case "A":
        case "AAAA":
          records.push({ type, address: asString(value, what) });
          break;
        case "MX": {
          if (!Array.isArray(value) || value.length !== 2) throw new Error(`${what}: expected [priority, exchange]`);
          records.push({ type: "MX", priority: Number(value[0]), exchange: asString(value[1], what) });
          break;
        }
        case "PTR":
        case "CNAME":
          records.push({ type, domain: asString(value, what) });
          break;
        default:
          throw new Error(`${what}: unsupported record type`);
      }
    }
  }
  if (!listsTxt) records.push(...spfAsTxt);
  return records;
}

function toZone(zonedata: Scenario["zonedata"]): Map<string, ZoneRecord[]> {
  const zone = new Map<string, ZoneRecord[]>();
  for (const [name, items] of Object.entries(zonedata ?? {})) {
    const key = name.toLowerCase().replace(/\.$/, "");
    zone.set(key, [...(zone.get(key) ?? []), ...toRecords(name, items ?? [])]);
  }
  return zone;
}

function acceptable(result: SuiteCase["result"]): string[] {
  return Array.isArray(result) ? result : [result];
}

const key = (scenario: Scenario, name: string) => `${scenario.description} / ${name}`;

// A From domain that no scenario serves, so the DMARC lookup has a quick NXDOMAIN.
const MESSAGE = Buffer.from("From: someone@postroom-spf-suite.invalid\r\nSubject: x\r\n\r\nbody\r\n");

let dns: TestDnsServer;
const skippedSeen: string[] = [];

beforeAll(async () => {
  dns = await TestDnsServer.start();
  dns.followCnames = true;
});

afterAll(async () => {
  await dns?.stop();
});

for (const scenario of scenarios) {
  describe(scenario.description, () => {
    const zone = toZone(scenario.zonedata);
    beforeAll(() => {
      dns.zone.clear();
      for (const [name, records] of zone) dns.zone.set(name, records);
    });

    for (const [name, tc] of Object.entries(scenario.tests)) {
      if (key(scenario, name) in SKIPPED) {
        skippedSeen.push(key(scenario, name));
        continue;
      }
      test(name, async () => {
        // A fresh resolver without a cache: no answer may leak from one case to the next.
        const resolver = createResolver({ servers: [dns.address], timeoutMs: 300, cacheTtlMs: 0 });
        const auth = await new AuthChecker(resolver, 0).check(
          MESSAGE,
          { mailFrom: tc.mailfrom, helo: tc.helo, remoteIp: tc.host, mta: "mx.postroom.test" },
          messageFacts(await parseMessage(MESSAGE, { maxHeaderBytes: 65_536, maxMimeDepth: 20, maxMimeParts: 100 })),
        );
        // AuthChecker.check reports temperror for everything when mailauth throws; with
        // no DKIM signature in the message a real evaluation says dkim=none.
        expect({ dkim: auth.dkim.result }).toEqual({ dkim: "none" });
        expect(auth.spf.result).toBeOneOf(acceptable(tc.result));
      }, 10_000);
    }
  });
}

describe("the suite itself", () => {
  test("was read: every scenario has cases, every case a known result", () => {
    expect(scenarios.length).toBeGreaterThan(10);
    for (const scenario of scenarios) {
      expect(Object.keys(scenario.tests).length).toBeGreaterThan(0);
      for (const tc of Object.values(scenario.tests)) {
        for (const r of acceptable(tc.result)) expect(RESULTS as readonly string[]).toContain(r);
      }
    }
  });

  test("skips only the cases listed, each with a reason", () => {
    const all = new Set(scenarios.flatMap((s) => Object.keys(s.tests).map((n) => key(s, n))));
    for (const [name, reason] of Object.entries(SKIPPED)) {
      expect(all.has(name)).toBe(true);
      expect(reason.trim().length).toBeGreaterThan(40);
    }
    expect(skippedSeen.sort()).toEqual(Object.keys(SKIPPED).sort());
    expect(skippedSeen.length).toBe(Object.keys(SKIPPED).length);
  });
});
