// The empty-sending_ips trap, in chromium: with outbound.sending_ips = [] (what `postroom
// init` writes) no SPF record is offered and no sending domain can verify. The overview and
// the sending domain pages say so and what to set, instead of the SPF row silently missing.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { requireTools } from "../helpers/tools.ts";
import { api, type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
let rig: DashboardRig;
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({ accounts: [ACCOUNT_A], outbound: "sending_ips = []" });
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`sending_ips screenshots:\n${shots.join("\n")}`);
});

/** The warning on the page: it names the key and what to set it to. */
async function warningShown(): Promise<void> {
  const warning = rig.page.getByRole("region", { name: "Sending IPs missing" });
  await warning.waitFor();
  const text = (await warning.textContent())!;
  expect(text).toContain("outbound.sending_ips");
  expect(text).toContain("sending_ips = [");
  expect(text).toContain("can be verified");
}

describe("outbound.sending_ips empty, in chromium", () => {
  browserTest(
    "the overview, the domain list and a domain's page say no domain can verify and what to set",
    async () => {
      await rig.page.goto(`${rig.http}/dashboard/overview`);
      await warningShown();
      // The checklist's domain step says it cannot be done yet, and why.
      await rig.page
        .getByRole("region", { name: "Getting started" })
        .getByText(/No domain can verify until outbound\.sending_ips is set/)
        .waitFor();
      shots.push(await pageIsClean(rig, "overview-sending-ips-empty"));
      const domain = await api(rig, "POST", "sending_domains", { domain: "sender.test" });
      expect(domain.dns_records.map((r: { purpose: string }) => r.purpose)).not.toContain("spf");
      await rig.page.goto(`${rig.http}/dashboard/domains`);
      await warningShown();
      await rig.page.goto(`${rig.http}/dashboard/domains/${domain.id}`);
      await rig.page.getByRole("heading", { name: "sender.test" }).waitFor();
      await warningShown();
      shots.push(await pageIsClean(rig, "domain-sending-ips-empty"));
    },
    60_000,
  );
});
