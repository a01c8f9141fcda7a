// Deliverability health in the dashboard, in chromium, signed in with an operator token:
// the System page lists the sending IPs with their PTR and blocklist listings, the
// overview's "Needs a look" says which IP is listed, and a sending domain's page explains
// its DMARC policy and alignment with what to publish.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { dnsblQueryName, ptrQueryName } from "../../src/deliverability/dnsbl.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { publishRecords } from "../helpers/sending-domain.ts";
import { requireTools } from "../helpers/tools.ts";
import { api, type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
const OPERATOR = "pr_operator_token_deliverability_browser";
const IP = "192.0.2.12";
const REASON = "Listed for spam; see https://bl.test/lookup";
let rig: DashboardRig;
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({
    accounts: [ACCOUNT_A],
    token: OPERATOR,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
    outbound: `sending_ips = ["${IP}"]\ndnsbl_zones = ["bl.test"]`,
  });
  rig.dns.set(ptrQueryName(IP), [{ type: "PTR", domain: "mx.postroom.test" }]);
  rig.dns.set("mx.postroom.test", [{ type: "A", address: IP }]);
  rig.dns.set(dnsblQueryName(IP, "bl.test"), [
    { type: "A", address: "127.0.0.2" },
    { type: "TXT", data: REASON },
  ]);
  await rig.t.app.deliverability.sending.check();
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`deliverability screenshots:\n${shots.join("\n")}`);
});

describe("deliverability health, in chromium", () => {
  browserTest(
    "System lists the sending IP as listed; the overview says so; a domain's page explains DMARC",
    async () => {
      // /dashboard/system itself is the page's JSON: the page is reached through its link.
      await rig.page.goto(`${rig.http}/dashboard/overview`);
      await rig.page.getByRole("link", { name: "System" }).click();
      const ips = rig.page.getByRole("region", { name: "Sending IPs" });
      await ips.getByText(REASON).waitFor();
      const text = (await ips.textContent())!;
      expect(text).toContain(IP);
      expect(text).toContain("mx.postroom.test");
      expect(text).toContain("bl.test");
      shots.push(await pageIsClean(rig, "system-sending-ips"));

      await rig.page.goto(`${rig.http}/dashboard/overview`);
      await rig.page
        .getByRole("region", { name: "Warnings" })
        .getByText(`sending IP ${IP} is listed on bl.test`, { exact: false })
        .waitFor();

      const domain = await api(rig, "POST", "sending_domains", { domain: "sender.test" });
      publishRecords(rig.dns, domain);
      rig.dns.set("_dmarc.sender.test", [{ type: "TXT", data: "v=DMARC1; p=none; rua=mailto:d@sender.test" }]);
      await api(rig, "POST", `sending_domains/${domain.id}/verify`);
      await rig.page.goto(`${rig.http}/dashboard/domains/${domain.id}`);
      const health = rig.page.getByRole("region", { name: "Deliverability" });
      await health.getByText("DMARC: none").waitFor();
      const explained = (await health.textContent())!;
      expect(explained).toContain("receivers report on mail that fails DMARC but deliver it anyway");
      expect(explained).toContain("To fix: p=none only asks for reports");
      expect(explained).toContain("Return path aligned");
      shots.push(await pageIsClean(rig, "domain-deliverability"));
    },
    60_000,
  );
});
