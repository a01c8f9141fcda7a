// CAA lookups that fail against pebble: a resolver that answers SERVFAIL or REFUSED for
// CAA, or does not answer at all, does not stop the order (the CA checks CAA itself);
// the certificate is obtained and the failed lookup is logged as a warning.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { startTestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { pebbleAvailable, startPebble, type Pebble } from "../helpers/pebble.ts";

const hasPebble = pebbleAvailable();
let dns: TestDnsServer;
let pebble: Pebble;

function acmeToml(domains: string[]): string {
  return `mode = "acme"
check_interval = "1h"
[tls.acme]
directory_url = "${pebble.directoryUrl}"
domains = ${JSON.stringify(domains)}
challenge_listen = "127.0.0.1:${pebble.challengePort}"
ca_file = "${pebble.caFile}"`;
}

async function waitFor<T>(what: string, probe: () => T | null | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\npebble log:\n${await pebble.log()}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  if (!hasPebble) return;
  dns = await TestDnsServer.start();
  pebble = await startPebble(dns.address);
});

afterAll(async () => {
  await pebble?.stop();
  await dns?.stop();
});

describe.if(hasPebble)("a CAA lookup that fails does not stop the order", () => {
  const cases = [
    ["SERVFAIL", "servfail.postroom.test", "SERVFAIL"],
    ["REFUSED", "refused.postroom.test", "REFUSED"],
    ["no answer", "silent.postroom.test", "no answer in time"],
  ] as const;
  for (const [how, name, said] of cases) {
    test(`${how} for CAA: a certificate all the same, and a warning that says why CAA was not checked`, async () => {
      const rcode = how === "no answer" ? "TIMEOUT" : how;
      dns.set(name, [
        { type: "A", address: "127.0.0.1" },
        { type: "FAIL", qtype: "CAA", rcode },
      ]);
      const lines: string[] = [];
      const app = await startTestApp({
        dnsServer: dns.address,
        inbound: true,
        tls: acmeToml([name]),
        logger: createLogger({ level: "info", sink: (l) => lines.push(l) }),
      });
      try {
        const failed = () => lines.find((l) => l.includes('"acme order failed"'));
        await waitFor("the order's outcome", () => app.app.tls.current() ?? failed());
        expect(failed()).toBeUndefined();
        expect(app.app.tls.status().certificate!.names).toEqual([name]);
        const warning = JSON.parse(lines.find((l) => l.includes('"caa lookup failed"'))!);
        expect(warning.level).toBe("warn");
        expect(warning.reason).toBe(`could not look up CAA at ${name} (${said}); ordering anyway, the CA checks CAA itself`);
      } finally {
        await app.stop();
      }
    }, 30_000);
  }
});
