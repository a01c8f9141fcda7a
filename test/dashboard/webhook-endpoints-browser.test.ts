// The webhook page's endpoints in chromium, as an account manages them: add one with a
// filter and a token, see its signing secret once (a real POST to it verifies with that
// secret), see it listed with its kinds (never the secret again), delete it.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { Webhook } from "standardwebhooks";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually } from "../helpers/sink.ts";
import { requireTools } from "../helpers/tools.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";
import { api, type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
const PLACEHOLDER = "whsec_" + Buffer.from("the endpoint's secret is not known").toString("base64");
let rig: DashboardRig;
let receiver: WebhookReceiver;
const shots: string[] = [];

beforeAll(async () => {
  receiver = WebhookReceiver.start(PLACEHOLDER);
  rig = await startDashboardRig({ accounts: [ACCOUNT_A], outbound: SENDING_KEYS, extra: "[webhooks]\nallow_private = true" });
  await api(rig, "POST", "sending_domains", { domain: "sender.test" });
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  await receiver?.stop();
  if (shots.length) console.log(`webhook endpoint screenshots:\n${shots.join("\n")}`);
}, 60_000);

describe("webhook endpoints in the dashboard", () => {
  browserTest(
    "add an endpoint with a filter: its secret is shown once and signs its POSTs; listed with its kinds; deleted",
    async () => {
      const page = rig.page;
      await page.goto(`${rig.http}/dashboard/webhook`);
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
      await page.getByText("No endpoints yet.").waitFor();
      await page.getByLabel("URL", { exact: true }).fill(receiver.url);
      await page.getByLabel("Token (optional)").fill("tok-dash");
      await page.getByRole("checkbox", { name: "registration" }).check();
      await page.getByRole("button", { name: "Add endpoint" }).click();
      const secretBox = page.getByLabel("Signing secret");
      await secretBox.waitFor();
      const secret = await secretBox.inputValue();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const row = page.locator("tbody tr", { hasText: receiver.url });
      await row.waitFor();
      expect(await row.textContent()).toContain("registration");
      shots.push(await pageIsClean(rig, "webhook-endpoint-added"));

      // A test-mode send gives a registration event: posted there, signed with the secret the page showed.
      receiver.secret = secret;
      const sent = await api<{ id: string }>(
        rig,
        "POST",
        `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
        { from: "shop@sender.test", to: ["dave@example.org"], subject: "hi", plain: "hi", test_mode: true },
        ACCOUNT_A.smtpKey,
      );
      await eventually(() => receiver.acknowledged().some((e) => e.message_id === sent.id), 10_000, "the endpoint's POST");
      const post = receiver.posts[0]!;
      expect(post.verified).toBe(true);
      expect(() => new Webhook(secret).verify(post.raw, post.headers)).not.toThrow();
      expect(post.headers.authorization).toBe("Bearer tok-dash");
      expect(new Set(receiver.acknowledged().map((e) => e.kind))).toEqual(new Set(["registration"]));

      // Shown once: after a reload the page lists the endpoint, never its secret.
      await page.reload();
      await row.waitFor();
      expect(await page.getByLabel("Signing secret").count()).toBe(0);
      expect(await page.content()).not.toContain(secret);

      await page.getByRole("button", { name: `Delete the endpoint ${receiver.url}` }).click();
      await page.getByText("No endpoints yet.").waitFor();
      expect(await api(rig, "GET", "webhooks")).toEqual([]);
      shots.push(await pageIsClean(rig, "webhook-endpoint-deleted"));
    },
    60_000,
  );
});
