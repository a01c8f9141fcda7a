// (beyond) The waiting list and "try now" (src/api/inbound-queue.ts) as a client sees them:
// a message kept for a target answering 503 is listed with since when, its attempts and the
// target's last answer; another account sees none of it and gets 404 for try now; try now
// on its own account gets it posted within a couple of seconds once the target is back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const B = `/api/v0.1/${ACCOUNT_B.id}`;
let t: TestApp;
let target: TestTarget;

beforeAll(async () => {
  target = TestTarget.start();
  // An hour between attempts: only try now posts it again within the test.
  t = await startTestApp({ inbound: true, inboundKeys: 'retry_delays = ["1h"]', accounts: [ACCOUNT_A, ACCOUNT_B] });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("waiting inbound mail", () => {
  test("listed with its last answer; try now is 404 for another account and posts it for its own", async () => {
    target.answers.set("/wait", { status: 503, contentType: "text/plain", body: "maintenance until noon" });
    const created = await t.json("POST", `${A}/addresses`, {
      auth: bearer(ACCOUNT_A.token),
      body: { target: target.url("/wait"), target_format: "json+n", on_target_failure: "queue" },
    });
    const sent = await sendWithNodemailer(t.app.inboundPort!, {
      from: "alice@sender.test",
      to: created.body.email,
      subject: "held",
      text: "x",
    });
    expect(sent.response).toStartWith("250 2.0.0 Accepted; the target is unavailable");
    const listed = await t.json("GET", `${A}/inbound_queue`, { auth: bearer(ACCOUNT_A.token) });
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    const [w] = listed.body;
    expect(w).toMatchObject({
      address_id: created.body.id,
      from: "alice@sender.test",
      to: [created.body.email],
      subject: "held",
      attempts: 1,
      last_response: "maintenance until noon",
    });
    expect(Date.parse(w.next_attempt_at) - Date.parse(w.created_at)).toBe(3_600_000);
    expect((await t.json("GET", `${B}/inbound_queue`, { auth: bearer(ACCOUNT_B.token) })).body).toEqual([]);
    const other = await t.json("POST", `${B}/inbound_queue/${w.id}/try_now`, { auth: bearer(ACCOUNT_B.token) });
    expect(other.status).toBe(404);
    expect(other.body.error).toStartWith("Not Found");

    target.answers.set("/wait", { status: 200, body: "ok" });
    const now = await t.json("POST", `${A}/inbound_queue/${w.id}/try_now`, { auth: bearer(ACCOUNT_A.token) });
    expect(now.status).toBe(200);
    await eventually(() => target.at("/wait").length === 2, 5_000, "the POST that try now asked for");
    await eventually(async () => (await t.json("GET", `${A}/inbound_queue`, { auth: bearer(ACCOUNT_A.token) })).body.length === 0, 5_000);
    const [status] = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth: bearer(ACCOUNT_A.token) })).body;
    expect(status).toMatchObject({ state: "delivered", attempts: 2, status: "200" });
  }, 30_000);
});
