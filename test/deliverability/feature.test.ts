// The deliverability feature's schedule: a check when the appliance starts (no call needed),
// then the job check-sending-ips every hour on the node holding its lease.
import { expect, test } from "bun:test";
import { dnsblQueryName } from "../../src/deliverability/dnsbl.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { startTestApp } from "../helpers/app.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { eventually } from "../helpers/sink.ts";

test("the sending IPs are checked at start: /healthz warns of a listing without anyone asking", async () => {
  const dns = await TestDnsServer.start();
  dns.set(dnsblQueryName("192.0.2.50", "bl.test"), [{ type: "A", address: "127.0.0.4" }]);
  const t = await startTestApp({ dnsServer: dns.address, outbound: `sending_ips = ["192.0.2.50"]\ndnsbl_zones = ["bl.test"]` });
  try {
    await eventually(
      async () =>
        ((await t.json("GET", "/healthz")).body.warnings as string[]).some((w) =>
          w.startsWith("sending IP 192.0.2.50 is listed on bl.test"),
        ),
      10_000,
      "the start-up check's warning",
    );
    expect(t.app.deliverability.jobs).toEqual([
      { name: "check-sending-ips", every: "0 0 * * * *", run: expect.any(Function), oncePerCluster: true },
    ]);
  } finally {
    await t.stop();
    await dns.stop();
  }
});

test("a reload that adds a sending IP checks it at once, not at the next hour", async () => {
  const dns = await TestDnsServer.start();
  dns.set(dnsblQueryName("192.0.2.51", "bl.test"), [{ type: "A", address: "127.0.0.4" }]);
  const outbound = (ips: string) => `sending_ips = [${ips}]\ndnsbl_zones = ["bl.test"]`;
  const t = await startTestApp({ dnsServer: dns.address, outbound: outbound(`"192.0.2.50"`) });
  try {
    await eventually(async () => (await t.app.deliverability.sending.list()).length === 1, 10_000, "the start-up check");
    const parsed = parseConfigText(
      testConfigToml({ dataDir: t.app.config.dataDir, dnsServer: dns.address, outbound: outbound(`"192.0.2.50", "192.0.2.51"`) }),
    );
    if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
    t.app.reload(parsed.config, ["outbound.sending_ips"]);
    await eventually(
      async () =>
        ((await t.json("GET", "/healthz")).body.warnings as string[]).some((w) =>
          w.startsWith("sending IP 192.0.2.51 is listed on bl.test"),
        ),
      5_000,
      "the new address's listing, checked on reload",
    );
  } finally {
    await t.stop();
    await dns.stop();
  }
});
