// The incoming pages as a newcomer uses them, in chromium: every address at once with the
// SMTP reply each sender got, a kept message's headers that never widen the page, search
// placeholders naming the fields each page's search takes, a search reset by switching
// address.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { requireTools } from "../helpers/tools.ts";
import { createAddress, type DashboardRig, pageIsClean, sendIn, startDashboardRig, statusesStored } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
let rig: DashboardRig;
let kept: { id: string; email: string };
let refusing: { id: string; email: string };
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({ accounts: [ACCOUNT_A] });
  rig.target.answers.set("/refuse", { status: 422, body: "no such customer here", contentType: "text/plain" });
  kept = await createAddress(rig, "/in", { store_messages: true, nickname: "kept inbox" });
  refusing = await createAddress(rig, "/refuse", { nickname: "refusing" });
  // A header line of 3,000 characters without a space: the headers view used to widen the page to fit it.
  expect(await sendIn(rig, kept.email, "Long header", { "X-Long-Token": "x".repeat(3000) })).toStartWith("250");
  expect(await sendIn(rig, refusing.email, "Refused one")).toContain("550");
  await statusesStored(rig, kept.id, 1);
  await statusesStored(rig, refusing.id, 1);
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`incoming screenshots:\n${shots.join("\n")}`);
});

const rowOf = (subject: string) => rig.page.locator("section > table > tbody > tr", { hasText: subject }).first();

describe("incoming mail in chromium", () => {
  browserTest(
    "all addresses at once, each message with the SMTP reply its sender got",
    async () => {
      await rig.page.goto(`${rig.http}/dashboard/incoming`);
      await rig.page.getByRole("heading", { name: "Incoming mail" }).waitFor();
      await rig.page.getByLabel("Address").selectOption({ label: "All addresses" });
      await rowOf("Long header").waitFor();
      await rowOf("Refused one").waitFor();
      expect(
        await rowOf("Long header")
          .getByText(/^250 2\.0\.0 Accepted$/)
          .count(),
      ).toBe(1);
      expect(
        await rowOf("Refused one")
          .getByText(/^550 5\.7\.1 no such customer here$/)
          .count(),
      ).toBe(1);
      expect(await rowOf("Refused one").locator(".status").first().textContent()).toBe("422");
      shots.push(await pageIsClean(rig, "incoming-all-addresses"));
    },
    60_000,
  );

  browserTest(
    "a kept message's headers and payload wrap or scroll in their box: the page never gets wider than the window",
    async () => {
      await rig.page.goto(`${rig.http}/dashboard/incoming?address=${kept.id}`);
      const row = rowOf("Long header");
      await row.getByText("Details").click();
      await row.getByRole("button", { name: "Headers and payload" }).click();
      await row.getByRole("rowheader", { name: "X-Long-Token" }).waitFor();
      const widths = await rig.page.evaluate(() => {
        const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document;
        return { page: d.documentElement.scrollWidth, window: d.documentElement.clientWidth };
      });
      expect(widths.page).toBeLessThanOrEqual(widths.window);
      const nav = await rig.page.locator("header.top").boundingBox();
      expect(nav!.width).toBeGreaterThanOrEqual(widths.window);
      shots.push(await pageIsClean(rig, "incoming-headers-and-payload"));
    },
    60_000,
  );

  browserTest(
    "each search box's placeholder names fields that page's search takes",
    async () => {
      const placeholder = async (path: string, heading: string) => {
        await rig.page.goto(`${rig.http}/dashboard/${path}`);
        await rig.page.getByRole("heading", { name: heading }).waitFor();
        return (await rig.page.getByRole("searchbox").getAttribute("placeholder"))!;
      };
      const incoming = await placeholder("incoming", "Incoming mail");
      expect(incoming).toContain("status:");
      expect(incoming).toContain("from:");
      const sent = await placeholder("sent", "Sent mail");
      expect(sent).not.toContain("status:404");
      expect(sent).toMatch(/to:|tag:/);
      const suppressions = await placeholder("suppressions", "Suppressions");
      expect(suppressions).not.toContain(":");
      shots.push(await pageIsClean(rig, "suppressions-placeholder"));
    },
    60_000,
  );

  browserTest(
    "switching address resets the search",
    async () => {
      await rig.page.goto(`${rig.http}/dashboard/incoming?address=${kept.id}`);
      await rig.page.getByRole("searchbox").fill("subject:nothing-like-this");
      await rig.page.getByRole("button", { name: "Search" }).click();
      await rig.page.getByText("No messages match this search.").waitFor();
      await rig.page.getByLabel("Address").selectOption({ label: `refusing (${refusing.email})` });
      await rowOf("Refused one").waitFor();
      expect(await rig.page.getByRole("searchbox").inputValue()).toBe("");
      expect(new URL(rig.page.url()).searchParams.get("query")).toBeNull();
      shots.push(await pageIsClean(rig, "incoming-switched-address"));
    },
    60_000,
  );
});
