// (beyond) POST .../addresses/{id}/test: a sample message to the address's real target,
// in its format, with the answer a sender would have got; nothing recorded.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { TestTarget } from "../helpers/target.ts";

let t: TestApp;
let target: TestTarget;
const auth = bearer(ACCOUNT_A.token);
const A = `/api/v0.1/${ACCOUNT_A.id}`;

async function address(path: string, format = "json+n"): Promise<{ id: string; email: string }> {
  return (await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: format } })).body;
}

beforeAll(async () => {
  target = TestTarget.start();
  target.answers.set("/refuse", { status: 422, body: "no such customer" });
  t = await startTestApp({ inbound: true, accounts: [ACCOUNT_A, ACCOUNT_B] });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("the test POST", () => {
  test("the target gets a json+n payload of the sample message; the answer is its status and the 250 a sender would get; no status is recorded", async () => {
    const a = await address("/in");
    const r = await t.json("POST", `${A}/addresses/${a.id}/test`, { auth });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "200", status_category: "successful", response: null });
    expect(r.body.smtp_reply).toStartWith("250 ");
    const got = target.at("/in").at(-1)!;
    expect(got.json.headers.subject).toBe("Postroom test POST");
    expect(got.json.envelope.to).toBe(a.email);
    expect(got.headers["x-postroom-message-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect((await t.json("GET", `${A}/incoming_statuses?address_id=${a.id}`, { auth })).body).toEqual([]);
  });

  test("a target that refuses: its status, its answer and the 550 a sender would get", async () => {
    const a = await address("/refuse");
    const r = await t.json("POST", `${A}/addresses/${a.id}/test`, { auth });
    expect(r.body).toMatchObject({ status: "422", status_category: "rejected", response: "no such customer" });
    expect(r.body.smtp_reply).toStartWith("550 ");
  });

  test("in the address's format: rfc822 posts the sample message itself", async () => {
    const a = await address("/raw-in", "rfc822");
    expect((await t.json("POST", `${A}/addresses/${a.id}/test`, { auth })).body.status).toBe("200");
    const got = target.at("/raw-in").at(-1)!;
    expect(got.contentType).toStartWith("message/rfc822");
    expect(new TextDecoder().decode(got.raw)).toContain(`To: <${a.email}>`);
  });

  test("another account's address is 404", async () => {
    const a = await address("/in");
    expect((await t.json("POST", `/api/v0.1/${ACCOUNT_B.id}/addresses/${a.id}/test`, { auth: bearer(ACCOUNT_B.token) })).status).toBe(404);
  });
});
