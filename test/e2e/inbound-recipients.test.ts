// envelope.recipients: every recipient of the SMTP transaction that reached the same
// account, in RCPT order (addresses, sub-addresses and custom domains alike), and never
// another account's. Still one POST per address. The client is swaks.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { runSwaks } from "../helpers/smtp.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget, type Received } from "../helpers/target.ts";
import { requireTools } from "../helpers/tools.ts";

let t: TestApp;
let target: TestTarget;

async function address(account: typeof ACCOUNT_A, path: string, format: "json+n" | "multipart+n" = "json+n") {
  const res = await t.json("POST", `/api/v0.1/${account.id}/addresses`, {
    auth: bearer(account.token),
    body: { target: target.url(path), target_format: format },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string };
}

const bodyText = (r: Received) => Buffer.from(r.raw).toString("utf8");

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({ inbound: true });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

requireTools("swaks")("envelope.recipients lists every recipient of the same account and none of another's", async () => {
  const a1 = await address(ACCOUNT_A, "/a1", "multipart+n");
  const a2 = await address(ACCOUNT_A, "/a2");
  const b1 = await address(ACCOUNT_B, "/b1");
  const custom = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/custom_domains?address_id=${a2.id}`, {
    auth: bearer(ACCOUNT_A.token),
    body: { domain: "shop.example" },
  });
  expect(custom.status).toBe(201);
  const a1Tagged = a1.email.replace("@", "+orders@");
  // RCPT order: A, B, A, A (custom domain of a2), A (a1 again, sub-addressed).
  const rcpts = [a2.email, b1.email, a1.email, "Sales@shop.example", a1Tagged];
  const { code, transcript } = await runSwaks([
    "--server",
    "127.0.0.1",
    "--port",
    String(t.app.inboundPort),
    "--helo",
    "client.sender.test",
    "--from",
    "alice@sender.test",
    "--to",
    rcpts.join(","),
    "--header",
    "To: undisclosed-recipients:;",
    "--header",
    "Subject: to five",
  ]);
  expect(code).toBe(0);
  expect(transcript).toContain("<-  250 2.0.0 Accepted");

  const accountA = [a2.email, a1.email, "Sales@shop.example", a1Tagged];
  // Still one POST per address, with `to` the first recipient that reached it.
  expect(target.at("/a1")).toHaveLength(1);
  expect(target.at("/a2")).toHaveLength(1);
  expect(target.at("/b1")).toHaveLength(1);
  expect(target.at("/a2")[0]!.json.envelope).toMatchObject({ to: a2.email, recipients: accountA });
  const form = await TestTarget.formData(target.at("/a1")[0]!);
  expect(form.get("envelope[to]")).toBe(a1.email);
  expect(accountA.map((_, i) => form.get(`envelope[recipients][${i}]`))).toEqual(accountA);
  expect(form.get(`envelope[recipients][${accountA.length}]`)).toBeNull();
  expect(target.at("/b1")[0]!.json.envelope).toMatchObject({ to: b1.email, recipients: [b1.email] });

  // The message names no recipient (its To is undisclosed), so nowhere in a POST (envelope,
  // our Received line, anything) is another account's recipient.
  for (const post of [...target.at("/a1"), ...target.at("/a2")]) expect(bodyText(post)).not.toContain(b1.id);
  for (const id of [a1.id, a2.id]) expect(bodyText(target.at("/b1")[0]!)).not.toContain(id);
  expect(bodyText(target.at("/b1")[0]!)).not.toContain("shop.example");
});

test("the same recipient given twice is listed once, and posted once", async () => {
  const a = await address(ACCOUNT_A, "/twice");
  const { session } = await SmtpSession.open(t.app.inboundPort!);
  await session.command("EHLO client.sender.test");
  await session.command("MAIL FROM:<alice@sender.test>");
  expect(await session.command(`RCPT TO:<${a.email}>`)).toStartWith("250");
  expect(await session.command(`RCPT TO:<${a.email.toUpperCase()}>`)).toStartWith("250");
  expect(await session.data("Subject: twice\r\n\r\nx\r\n")).toBe("250 2.0.0 Accepted");
  await session.close();
  expect(target.at("/twice")).toHaveLength(1);
  expect(target.at("/twice")[0]!.json.envelope.recipients).toEqual([a.email]);
  const statuses = (
    await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${a.id}`, { auth: bearer(ACCOUNT_A.token) })
  ).body;
  expect(statuses).toHaveLength(1);
});
