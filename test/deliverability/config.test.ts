// The deliverability keys: outbound.dnsbl_zones (DESIGN.md's default), avoid_listed_ips
// and complaint_rate_warning; a bad value is an error naming the key.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfigText } from "../../src/config/load.ts";
import { tempDir } from "../helpers/tmp.ts";

const problemsOf = (toml: string): string[] => {
  const r = parseConfigText(toml);
  return r.ok ? [] : r.problems;
};

describe("outbound deliverability keys", () => {
  test("defaults", () => {
    const r = parseConfigText("");
    if (!r.ok) throw new Error(r.problems.join("; "));
    expect(r.config.outbound.dnsblZones).toEqual(["zen.spamhaus.org", "b.barracudacentral.org", "bl.spamcop.net"]);
    expect(r.config.outbound.avoidListedIps).toBe(true);
    expect(r.config.outbound.complaintRateWarning).toBe(0.001);
  });

  test("zones are lower-cased, a final dot dropped; [] checks none", () => {
    const r = parseConfigText(`[outbound]\ndnsbl_zones = ["BL.Example.net."]`);
    if (!r.ok) throw new Error(r.problems.join("; "));
    expect(r.config.outbound.dnsblZones).toEqual(["bl.example.net"]);
    const none = parseConfigText(`[outbound]\ndnsbl_zones = []`);
    expect(none.ok && none.config.outbound.dnsblZones).toEqual([]);
  });

  test.each([
    ["an address", `"127.0.0.1"`],
    ["a URL", `"https://bl.example.net"`],
    ["a single label", `"localhost"`],
    ["a space", `"bl example.net"`],
    ["empty", `""`],
  ])("a zone that is not a domain name (%s) names the key", (_, value) => {
    expect(problemsOf(`[outbound]\ndnsbl_zones = ["zen.spamhaus.org", ${value}]`)).toEqual([
      expect.stringMatching(/^outbound\.dnsbl_zones\[1\]: must be a domain name/),
    ]);
  });

  test("the complaint rate warning is a fraction", () => {
    expect(problemsOf(`[outbound]\ncomplaint_rate_warning = 2`)).toEqual([expect.stringMatching(/^outbound\.complaint_rate_warning: /)]);
  });
});

test("postroom check-config names outbound.dnsbl_zones for a zone that is not a domain name", () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, "postroom.toml");
    writeFileSync(file, `[outbound]\ndnsbl_zones = ["zen.spamhaus.org", "127.0.0.1"]\n`);
    const main = new URL("../../src/main.ts", import.meta.url).pathname;
    const run = Bun.spawnSync([process.execPath, main, "check-config", "--config", file]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout.toString() + run.stderr.toString()).toContain(
      'outbound.dnsbl_zones[1]: must be a domain name, the blocklist\'s zone (e.g. "zen.spamhaus.org")',
    );
  } finally {
    dir.remove();
  }
});
