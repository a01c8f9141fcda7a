// A large message through the path issue 15 made lean: read into one buffer with room for
// our trace lines, parsed in slices on a worker thread (its attachments handed back, not
// copied), posted with its attachments written into the request as it goes out (json+n in
// Base64, multipart+n as they are), with a Content-Length, a valid signature, and the
// same bytes the small-message path would post. Sent by nodemailer over real SMTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const big = Buffer.from(crypto.getRandomValues(new Uint8Array(700_001)));
const small = Buffer.from("%PDF-1.4 small one");

let t: TestApp;
let target: TestTarget;
let json: { email: string; signing_secret: string };
let multi: { email: string };

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({ inbound: true, accounts: [ACCOUNT_A], inboundKeys: "parse_workers = 1" });
  const created = await t.json("POST", `${A}/addresses`, {
    auth,
    body: { target: target.url("/json"), target_format: "json+n", signed: true },
  });
  json = created.body;
  multi = (await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/multi"), target_format: "multipart+n" } })).body;
  const result = await sendWithNodemailer(t.app.inboundPort!, {
    from: "sender@sender.test",
    to: [json.email, multi.email],
    subject: "large",
    text: "Two files attached.",
    attachments: [
      { filename: "big.bin", content: big, contentType: "application/octet-stream" },
      { filename: "small.pdf", content: small, contentType: "application/pdf" },
    ],
  });
  expect(result.code).toBe(250);
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("a message of 1 MB with a 700 KB attachment", () => {
  test("json+n: the attachments' Base64 in place, a Content-Length, and a signature over the bytes", () => {
    const [post] = target.at("/json");
    expect(post!.headers["content-length"]).toBe(String(post!.raw.length));
    expect(post!.json.attachments).toEqual([
      {
        file_name: "big.bin",
        content_type: "application/octet-stream",
        size: String(big.length),
        disposition: "attachment",
        content_id: null,
        content: big.toString("base64"),
      },
      {
        file_name: "small.pdf",
        content_type: "application/pdf",
        size: String(small.length),
        disposition: "attachment",
        content_id: null,
        content: small.toString("base64"),
      },
    ]);
    expect(post!.json.plain).toBe("Two files attached.");
    // Our trace lines are in front of the sender's headers, as for any message.
    expect(post!.json.headers.return_path).toBe("<sender@sender.test>");
    expect(post!.json.headers.received).toBeDefined();
    // Exactly the bytes JSON.stringify gives for the payload (what small messages get).
    expect(Buffer.from(post!.raw).equals(Buffer.from(JSON.stringify(post!.json)))).toBe(true);
    expect(new Webhook(json.signing_secret).verify(Buffer.from(post!.raw), post!.headers)).toBeDefined();
  });

  test("multipart+n: the files as they were, the fields as for any message", async () => {
    const [post] = target.at("/multi");
    expect(post!.headers["content-length"]).toBe(String(post!.raw.length));
    const form = await TestTarget.formData(post!);
    const files = form.getAll("attachments[]") as File[];
    expect(files.map((f) => [f.name, f.type, f.size])).toEqual([
      ["big.bin", "application/octet-stream", big.length],
      ["small.pdf", "application/pdf", small.length],
    ]);
    expect(
      createHash("sha256")
        .update(Buffer.from(await files[0]!.arrayBuffer()))
        .digest("hex"),
    ).toBe(createHash("sha256").update(big).digest("hex"));
    expect(Buffer.from(await files[1]!.arrayBuffer()).equals(small)).toBe(true);
    expect(form.get("plain")).toBe("Two files attached.");
    expect(form.get("headers[subject]")).toBe("large");
  });

  test("the budget is back to zero", () => {
    expect(t.app.budget.inFlightBytes).toBe(0);
  });
});

describe("signatures cover the bytes sent", () => {
  /** docs/receiving.md's check: HMAC-SHA256 over "<id>.<timestamp>." and the raw body. */
  const verifies = (secret: string, post: { headers: Record<string, string>; raw: Uint8Array }) => {
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const expected = createHmac("sha256", key)
      .update(`${post.headers["webhook-id"]}.${post.headers["webhook-timestamp"]}.`)
      .update(post.raw)
      .digest("base64");
    return post.headers["webhook-signature"] === `v1,${expected}`;
  };

  test("multipart+n with binary files, small (one buffer) and large (streamed)", async () => {
    const created = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url("/signed-multi"), target_format: "multipart+n", signed: true },
    });
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xe2, 0x82]);
    for (const content of [binary, big]) {
      const result = await sendWithNodemailer(t.app.inboundPort!, {
        from: "sender@sender.test",
        to: created.body.email,
        subject: "signed",
        text: "x",
        attachments: [{ filename: "b.bin", content }],
      });
      expect(result.code).toBe(250);
    }
    const posts = target.at("/signed-multi");
    expect(posts).toHaveLength(2);
    for (const post of posts) expect(verifies(created.body.signing_secret, post)).toBe(true);
  });
});
