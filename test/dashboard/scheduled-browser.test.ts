// Issue 34 on the Sent mail pages, in chromium: a message scheduled with send_at shows when
// it goes out, the Scheduled button lists what waits (status:scheduled), the message's page
// shows its time and metadata, and Cancel stops it before its time.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { requireTools } from "../helpers/tools.ts";
import { api, type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
let rig: DashboardRig;
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({ outbound: SENDING_KEYS });
  const created = await api(rig, "POST", "sending_domains", { domain: "sender.test" });
  publishRecords(rig.dns, created);
  await api(rig, "POST", `sending_domains/${created.id}/verify`);
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`scheduled screenshots:\n${shots.join("\n")}`);
}, 60_000);

describe("scheduled messages in chromium", () => {
  browserTest(
    "a scheduled message: its time in the list and on its page, its metadata, and Cancel before its time",
    async () => {
      const sendAt = new Date(Date.now() + 3_600_000).toISOString();
      const sent = await api<{ id: string }>(
        rig,
        "POST",
        `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
        {
          from: "shop@sender.test",
          to: "bob@example.org",
          subject: "Sent later",
          plain: "hi",
          send_at: sendAt,
          metadata: { order_id: "A-77" },
        },
        ACCOUNT_A.smtpKey,
      );
      await api(
        rig,
        "POST",
        `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
        { from: "shop@sender.test", to: "ann@example.org", subject: "Sent now", plain: "hi", test_mode: true },
        ACCOUNT_A.smtpKey,
      );
      await rig.page.goto(`${rig.http}/dashboard/sent`);
      await rig.page.getByRole("row", { name: /Sent now/ }).waitFor();
      await rig.page.getByRole("button", { name: "Scheduled" }).click();
      const row = rig.page.getByRole("row", { name: /Sent later/ });
      await row.waitFor();
      // "Sent later" was listed before the filter too: wait for the filtered list itself.
      await rig.page.getByRole("row", { name: /Sent now/ }).waitFor({ state: "detached" });
      expect(await rig.page.getByRole("row", { name: /Sent now/ }).count()).toBe(0);
      await row.getByText(/scheduled for/).waitFor();
      shots.push(await pageIsClean(rig, "sent-scheduled"));

      await rig.page.goto(`${rig.http}/dashboard/sent/${sent.id}`);
      await rig.page.getByRole("heading", { name: "Sent later" }).waitFor();
      await rig.page.getByText("Scheduled for").waitFor();
      const metadata = rig.page.getByRole("definition").filter({ has: rig.page.getByText("order_id") });
      await metadata.getByText("A-77").waitFor();
      shots.push(await pageIsClean(rig, "sent-message-scheduled"));

      await rig.page.goto(`${rig.http}/dashboard/sent?query=status%3Ascheduled`);
      rig.page.once("dialog", (d) => void d.accept());
      await rig.page
        .getByRole("row", { name: /Sent later/ })
        .getByRole("button", { name: "Cancel" })
        .click();
      await rig.page.getByText("No messages match this search.").waitFor();
      const m = await api(rig, "GET", `outbound_messages/${sent.id}`);
      expect(m.recipients[0].status).toBe("error");
    },
    60_000,
  );
});
