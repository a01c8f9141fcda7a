// The admin view's Accounts and Audit pages in chromium (issue 33): an operator signed in
// with an operator token creates an account, mints a token (shown once, and it works),
// revokes it (and it stops working), adds an outbound account, and reads what it did in
// the audit log. A config account is shown read only. Every page holds to pageIsClean.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { requireTools } from "../helpers/tools.ts";
import { type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
const OPERATOR = "pr_operator_token_dashboard_accounts";
let rig: DashboardRig;
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({
    accounts: [ACCOUNT_A],
    token: OPERATOR,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
  });
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`accounts screenshots:\n${shots.join("\n")}`);
});

const statusWith = async (path: string, token: string) => (await rig.t.call("GET", path, { auth: `Bearer ${token}` })).status;

describe("the admin view's accounts, in chromium", () => {
  browserTest(
    "create an account, mint a token that works, revoke it, add an outbound account, read the audit log",
    async () => {
      const page = rig.page;
      await page.getByRole("link", { name: "Accounts" }).click();
      await page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
      // The config's account: shown, but nothing on it can be changed here.
      await page.getByText("from the config file (change it there)").waitFor();
      await page.getByLabel("Name").fill("Browser tenant");
      await page.getByRole("button", { name: "Create account" }).click();
      await page.getByRole("heading", { name: "Browser tenant" }).waitFor();
      const id = (await rig.t.app.repos.tenants.loadAll()).find((a) => a.name === "Browser tenant")!.id;

      await page.getByRole("button", { name: "Mint a token for Browser tenant" }).click();
      const note = page.getByRole("status", { name: "New secret" });
      await note.waitFor();
      const token = (await note.locator("code").textContent())!;
      expect(token).toStartWith("pr_");
      expect(await statusWith(`/api/v0.1/${id}/addresses`, token)).toBe(200);
      shots.push(await pageIsClean(rig, "accounts-token-minted"));

      const tokenId = (await rig.t.app.repos.tenants.get(id))!.tokens[0]!.id;
      await page.getByRole("button", { name: `Revoke token ${tokenId}` }).click();
      await page.getByRole("button", { name: `Revoke token ${tokenId}` }).waitFor({ state: "detached" });
      expect(await statusWith(`/api/v0.1/${id}/addresses`, token)).toBe(401);

      await page.getByRole("button", { name: "New outbound account for Browser tenant" }).click();
      await page
        .getByRole("status", { name: "New secret" })
        .getByText(/key of outbound account [0-9a-f]{16}/)
        .waitFor();
      const outbound = (await rig.t.app.repos.tenants.get(id))!.outbound[0]!;
      await page.getByRole("button", { name: `Add a key to ${outbound.id}` }).waitFor();

      await page.getByRole("button", { name: "Suspend Browser tenant" }).click();
      await page.getByRole("button", { name: "Resume Browser tenant" }).waitFor();
      expect(rig.t.app.registry.suspended(id)).toBe(true);
      shots.push(await pageIsClean(rig, "accounts"));

      await page.getByRole("link", { name: "Audit" }).click();
      await page.getByRole("heading", { name: "Audit log" }).waitFor();
      for (const action of ["account.create", "api_token.create", "api_token.revoke", "outbound_account.create", "account.update"])
        await page.getByRole("cell", { name: action, exact: true }).first().waitFor();
      await page
        .getByRole("cell", { name: `admin_tokens:${hashSecret(OPERATOR).slice(7, 19)}` })
        .first()
        .waitFor();
      shots.push(await pageIsClean(rig, "audit"));
    },
    60_000,
  );
});
