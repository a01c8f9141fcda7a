// The admin view lists paused destinations and why (issue 29), in chromium: an operator's
// pause and a throttle's, each with who paused it, the reason and until when; resumed, it
// is gone from the list.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { requireTools } from "../helpers/tools.ts";
import { type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
const ADMIN = "pr_admin_token_for_paused_destinations";
let rig: DashboardRig;
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({ accounts: [ACCOUNT_A], token: ADMIN, extra: `[dashboard]\nadmin_tokens = ["${hashSecret(ADMIN)}"]` });
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`paused destinations screenshots:\n${shots.join("\n")}`);
});

describe("the System page, in chromium", () => {
  browserTest(
    "lists the destinations paused now, by whom, why and until when",
    async () => {
      const paused = await rig.t.call("POST", "/api/v0.1/operator/destinations/example.org/pause", { auth: `Bearer ${ADMIN}` });
      expect(paused.status).toBe(200);
      const now = Date.now();
      await rig.t.app.repos.destinations.putPause({
        destination: "google",
        source: "throttle",
        reason: "421 4.7.28 Our system has detected an unusual rate of unsolicited mail",
        pausedAtMs: now,
        untilMs: now + 600_000,
        pauseMs: 600_000,
      });
      await rig.page.getByRole("link", { name: "System" }).click();
      await rig.page.getByRole("heading", { name: "Paused destinations" }).waitFor();
      const operatorRow = rig.page.getByRole("row", { name: /example\.org/ });
      await operatorRow.waitFor();
      expect(await operatorRow.textContent()).toContain("an operator");
      expect(await operatorRow.textContent()).toContain("admin_tokens:");
      expect(await operatorRow.textContent()).toContain("resumed by an operator");
      const throttleRow = rig.page.getByRole("row", { name: /google/ });
      expect(await throttleRow.textContent()).toContain("a throttle reply");
      expect(await throttleRow.textContent()).toContain("4.7.28");
      shots.push(await pageIsClean(rig, "system-paused-destinations"));

      await rig.t.call("POST", "/api/v0.1/operator/destinations/example.org/resume", { auth: `Bearer ${ADMIN}` });
      await rig.page.getByRole("link", { name: "Overview" }).click();
      await rig.page.getByRole("heading", { name: "Overview" }).waitFor();
      await rig.page.getByRole("link", { name: "System" }).click();
      await rig.page.getByRole("row", { name: /google/ }).waitFor();
      expect(await rig.page.getByRole("row", { name: /example\.org/ }).count()).toBe(0);
    },
    60_000,
  );
});
