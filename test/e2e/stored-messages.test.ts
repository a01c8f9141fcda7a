// (beyond) store_messages on an address: each received message is kept (locally, or in the
// address's S3 store) and its signed URL goes to the target as envelope.store_url and into
// E6 as store_url; the URL serves the message exactly as the sender sent it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const clock = new ManualClock(Date.now());
let t: TestApp;
let target: TestTarget;
const auth = bearer(ACCOUNT_A.token);
const A = `/api/v0.1/${ACCOUNT_A.id}`;

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({ inbound: true, clock });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

/** The stored message behind a signed URL of ours, fetched from the running appliance. */
async function fetchStored(url: string): Promise<Response> {
  const u = new URL(url);
  return t.call("GET", `${u.pathname}${u.search}`, { auth: null });
}

describe("store_messages", () => {
  test("local: envelope.store_url serves the message as sent (its MD5 is envelope.md5), and E6 shows the URL", async () => {
    const created = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url("/kept"), target_format: "json+n", store_messages: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.store_messages).toBe(true);
    expect(
      (
        await sendWithNodemailer(t.app.inboundPort!, {
          from: "alice@sender.test",
          to: created.body.email,
          subject: "keep me",
          text: "kept body",
        })
      ).code,
    ).toBe(250);
    const envelope = target.at("/kept")[0]!.json.envelope;
    expect(envelope.store_url).toMatch(/\/attachments\/.+\.eml\?expires=\d+&signature=/);
    const got = await fetchStored(envelope.store_url);
    expect(got.status).toBe(200);
    const bytes = new Uint8Array(await got.arrayBuffer());
    expect(createHash("md5").update(bytes).digest("hex")).toBe(envelope.md5);
    expect(new TextDecoder().decode(bytes)).toContain("Subject: keep me");
    const statuses = await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth });
    expect(statuses.body[0].store_url).toBe(envelope.store_url);
  });

  test("off by default: no store_url anywhere; turned on by PATCH, and a PUT that leaves it out keeps it", async () => {
    const created = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/plain"), target_format: "json+n" } });
    expect(created.body.store_messages).toBe(false);
    await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: created.body.email, subject: "not kept", text: "x" });
    expect("store_url" in target.at("/plain")[0]!.json.envelope).toBe(false);
    expect((await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body[0].store_url).toBeNull();
    const patched = await t.json("PATCH", `${A}/addresses/${created.body.id}`, { auth, body: { store_messages: true } });
    expect(patched.body.store_messages).toBe(true);
    const put = await t.json("PUT", `${A}/addresses/${created.body.id}`, {
      auth,
      body: { target: target.url("/plain"), target_format: "json+n" },
    });
    expect(put.body.store_messages).toBe(true);
  });

  test("the URL stops working after inbound.attachment_url_ttl", async () => {
    const created = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url("/ttl"), target_format: "json+n", store_messages: true },
    });
    await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: created.body.email, subject: "expiring", text: "x" });
    const url = target.at("/ttl")[0]!.json.envelope.store_url;
    expect((await fetchStored(url)).status).toBe(200);
    clock.advance(8 * 86_400_000);
    expect((await fetchStored(url)).status).not.toBe(200);
  });
});

describe("a kept message in the incoming Details: its headers, the payload posted, post again", () => {
  test("a message the target refused (500) is posted again once the target is back: a new status with the 200", async () => {
    target.answers.set("/again", { status: 500, body: "database down" });
    const created = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url("/again"), target_format: "json+n", store_messages: true },
    });
    const sent = await sendWithNodemailer(t.app.inboundPort!, {
      from: "alice@sender.test",
      to: created.body.email,
      subject: "try again",
      text: "second time lucky",
    });
    expect(sent.code).toBe(451);
    const first = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body;
    expect(first.map((s: { status: string }) => s.status)).toEqual(["500"]);
    expect(first[0].response).toBe("database down");

    target.answers.set("/again", { status: 200, body: "stored" });
    clock.advance(1000); // E6 lists newest first
    const again = await t.json("POST", `${A}/incoming_statuses/${first[0].id}/post_again?address_id=${created.body.id}`, { auth });
    expect(again.status).toBe(200);
    expect(again.body.smtp_reply).toMatch(/^250 /);
    const posts = target.at("/again");
    expect(posts).toHaveLength(2);
    // The same message: the same MD5 and text, and the same key for a target that drops repeats.
    expect(posts[1]!.json.envelope.md5).toBe(posts[0]!.json.envelope.md5);
    expect(posts[1]!.json.plain).toBe("second time lucky\n");
    expect(posts[1]!.headers["x-postroom-message-id"]).toBe(posts[0]!.headers["x-postroom-message-id"]);
    const after = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body;
    expect(after.map((s: { status: string }) => s.status)).toEqual(["200", "500"]);
    expect(after[0].from).toBe("alice@sender.test");
  });

  test("the message view: the headers as sent, in order, and the JSON payload the target got (attachments' contents left out)", async () => {
    const created = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url("/view"), target_format: "json+n", store_messages: true },
    });
    await sendWithNodemailer(t.app.inboundPort!, {
      from: "alice@sender.test",
      to: created.body.email,
      subject: "Gr\u00fc\u00dfe",
      text: "see attached",
      headers: { "X-Order": "1234" },
      attachments: [{ filename: "note.txt", content: "attached text" }],
    });
    const posted = target.at("/view")[0]!.json;
    const status = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body[0];
    const view = await t.json("GET", `${A}/incoming_statuses/${status.id}/message?address_id=${created.body.id}`, { auth });
    expect(view.status).toBe(200);
    expect(view.body.format).toBe("json+n");
    const names = view.body.headers.map((h: { name: string }) => h.name);
    expect(names).toContain("X-Order");
    expect(view.body.headers.find((h: { name: string }) => h.name === "Subject").value).toBe("Gr\u00fc\u00dfe");
    expect(names.indexOf("From")).toBeLessThan(names.indexOf("Content-Type"));
    expect(view.body.payload.content_type).toBe("application/json");
    const shown = JSON.parse(view.body.payload.body);
    expect(shown.envelope).toEqual(posted.envelope);
    expect(shown.plain).toBe(posted.plain);
    expect(shown.headers.x_order).toBe("1234");
    expect(shown.attachments[0].file_name).toBe("note.txt");
    expect(shown.attachments[0].size).toBe("13");
    expect(shown.attachments[0].content).toBe("(13 bytes, Base64, not shown)");
  });

  test("a message that was not kept: 422 saying so; another account's status: 404", async () => {
    const created = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/unkept"), target_format: "json+n" } });
    await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: created.body.email, subject: "not kept", text: "x" });
    const status = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body[0];
    const path = `/incoming_statuses/${status.id}/message?address_id=${created.body.id}`;
    const unkept = await t.json("GET", `${A}${path}`, { auth });
    expect(unkept.status).toBe(422);
    expect(unkept.body.error).toContain("not kept");
    const other = await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}${path}`, { auth: bearer(ACCOUNT_B.token) });
    expect(other.status).toBe(404);
    const otherAgain = await t.json(
      "POST",
      `/api/v0.1/${ACCOUNT_B.id}/incoming_statuses/${status.id}/post_again?address_id=${created.body.id}`,
      { auth: bearer(ACCOUNT_B.token) },
    );
    expect(otherAgain.status).toBe(404);
  });
});

describe("store_messages with an S3 store, against s3rver", () => {
  test("the message goes to the bucket; store_url is a presigned URL that serves it", async () => {
    clock.set(Date.now());
    const { default: S3rver } = await import("s3rver");
    const dir = `/tmp/postroom-s3rver-stored-${process.pid}`;
    const s3 = new S3rver({
      port: 0,
      address: "127.0.0.1",
      silent: true,
      directory: dir,
      configureBuckets: [{ name: "mail-store", configs: [] }],
    });
    const { port } = await s3.run();
    try {
      const created = await t.json("POST", `${A}/addresses`, {
        auth,
        body: {
          target: target.url("/s3kept"),
          target_format: "json+n",
          store_messages: true,
          attachments: {
            store: "s3",
            bucket: "mail-store",
            region: "us-east-1",
            endpoint: `http://127.0.0.1:${port}`,
            path_prefix: "messages/",
            access_key_id: "S3RVER",
            secret_access_key: "S3RVER",
          },
        },
      });
      expect(created.status).toBe(201);
      expect(
        (
          await sendWithNodemailer(t.app.inboundPort!, {
            from: "alice@sender.test",
            to: created.body.email,
            subject: "to the bucket",
            text: "x",
          })
        ).code,
      ).toBe(250);
      const envelope = target.at("/s3kept")[0]!.json.envelope;
      const url = new URL(envelope.store_url);
      expect(url.pathname).toMatch(/^\/mail-store\/messages\/.+\.eml$/);
      const bytes = new Uint8Array(await (await fetch(envelope.store_url)).arrayBuffer());
      expect(createHash("md5").update(bytes).digest("hex")).toBe(envelope.md5);
    } finally {
      await s3.close();
      await Bun.$`rm -rf ${dir}`.quiet();
    }
  });
});
