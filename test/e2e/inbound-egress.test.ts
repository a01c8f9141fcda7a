// What the egress guard does with a target's answers at delivery: real SMTP in, a real
// HTTP target (Bun.serve) out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);

let t: TestApp;
let target: TestTarget;

beforeAll(async () => {
  target = TestTarget.start();
  target.answers.set("/to-file", { status: 302, headers: { location: "file:///etc/passwd" } });
  target.answers.set("/to-ftp", { status: 307, headers: { location: "ftp://files.example/in" } });
  t = await startTestApp({ inbound: true });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("a redirect off the web", () => {
  test.each([
    ["/to-file", "302", "redirect to a non-http(s) URL refused (file:)"],
    ["/to-ftp", "307", "redirect to a non-http(s) URL refused (ftp:)"],
  ])("target %s: refused as a redirect, recorded with the target's status and why", async (path, status, response) => {
    const created = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: "json+n" } });
    expect(created.status).toBe(201);
    const result = await sendWithNodemailer(t.app.inboundPort!, {
      from: "alice@sender.test",
      to: created.body.email,
      subject: "redirected",
      text: "x",
    });
    expect(result.response).toBe("451 4.3.0 The target failed; try again later");
    expect(target.at(path)).toHaveLength(1);
    const [s] = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body;
    expect(s).toMatchObject({ status, status_category: "delayed", response });
  });
});
