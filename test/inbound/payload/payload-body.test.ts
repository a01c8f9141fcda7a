// Streamed bodies (src/inbound/payload/payload-body.ts, issue 15): a message with large embedded
// attachments is posted as the same bytes JSON.stringify and FormData give, never joined
// into one string; its length is known beforehand and its signature is the one the
// Standard Webhooks library makes over those bytes.
import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { formBody, jsonBody, signatureOf, streamOf, type StreamedBody } from "../../../src/inbound/payload/payload-body.ts";
import {
  buildPayload,
  payloadAttachment,
  toFormData,
  type MessageAttachment,
  type MessageContent,
  type PayloadEnvelope,
} from "../../../src/inbound/payload/payload.ts";

const envelope: PayloadEnvelope = {
  to: "a@in.example.com",
  recipients: ["a@in.example.com"],
  from: "sender@example.org",
  helo_domain: "mail.example.org",
  remote_ip: "192.0.2.1",
  spf: { result: "pass", domain: "example.org" },
  tls: false,
  tls_cipher: null,
  md5: "0123456789abcdef0123456789abcdef",
  dkim: { result: "none", signatures: [] },
  dmarc: { result: "none", domain: null, policy: null },
};

const random = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));
const attachment = (fileName: string, content: Buffer): MessageAttachment => ({
  fileName,
  contentType: "application/octet-stream",
  disposition: "attachment",
  contentId: null,
  content,
});

// Sizes around the slice (48 KiB) and Base64's groups of 3, a file name that needs escaping,
// and text with characters JSON escapes and multi-byte UTF-8.
const content: MessageContent = {
  headers: { subject: 'Grüße "quoted" \\ back\nslash', from: "Sender <sender@example.org>" } as never,
  originalHeaders: { Subject: "Grüße", From: "Sender <sender@example.org>" },
  plain: "Körper ✓ \u0000 \u2028 text",
  html: "<p>hé</p>",
  attachments: [
    attachment("one.bin", random(300_001)),
    attachment('two "x".bin', random(49_152)),
    attachment("three.bin", random(2)),
    attachment("empty.bin", Buffer.alloc(0)),
  ],
};

async function read(body: StreamedBody): Promise<Buffer> {
  return Buffer.from(await new Response(streamOf(body)).arrayBuffer());
}

const payloadWith = (contentOf?: (i: number) => string) =>
  buildPayload(
    content,
    envelope,
    content.attachments.map((a, i) => payloadAttachment(a, null, contentOf?.(i))),
  );

describe("jsonBody", () => {
  test("the bytes of JSON.stringify of the payload, with its length; read twice alike", async () => {
    const expected = Buffer.from(JSON.stringify(payloadWith()), "utf8");
    const body = jsonBody(content.attachments, payloadWith);
    expect(body.contentType).toBe("application/json");
    expect(body.length).toBe(expected.length);
    expect((await read(body)).equals(expected)).toBe(true);
    expect((await read(body)).equals(expected)).toBe(true);
  });

  test("its signature is the standardwebhooks library's over the same text", () => {
    const secret = `whsec_${random(32).toString("base64")}`;
    const body = jsonBody(content.attachments, payloadWith);
    const nowMs = 1_790_000_000_123;
    expect(signatureOf(secret, "key-1", Math.floor(nowMs / 1000), body)).toBe(
      new Webhook(secret).sign("key-1", new Date(nowMs), JSON.stringify(payloadWith())),
    );
  });
});

describe("formBody", () => {
  test("the bytes FormData encodes, its own boundary put in; file bytes as they are", async () => {
    const plain = new Response(toFormData(payloadWith(), content.attachments));
    const plainType = plain.headers.get("content-type")!;
    const plainBytes = Buffer.from(await plain.arrayBuffer());
    const body = await formBody(content.attachments, (contentOf) => toFormData(payloadWith(contentOf), content.attachments, contentOf));
    const boundary = (type: string) => /boundary=(.+)$/.exec(type)![1]!;
    const expected = Buffer.from(plainBytes.toString("latin1").split(boundary(plainType)).join(boundary(body.contentType)), "latin1");
    expect(body.contentType.replace(boundary(body.contentType), "B")).toBe(plainType.replace(boundary(plainType), "B"));
    expect(body.length).toBe(expected.length);
    expect((await read(body)).equals(expected)).toBe(true);
    // The target gets the files back as they were (names as FormData encodes them).
    const parsed = await new Response(await read(body), { headers: { "content-type": body.contentType } }).formData();
    const files = parsed.getAll("attachments[]") as File[];
    expect(files.map((f) => f.name)).toEqual(["one.bin", "two %22x%22.bin", "three.bin", "empty.bin"]);
    for (const [i, f] of files.entries()) expect(Buffer.from(await f.arrayBuffer()).equals(content.attachments[i]!.content)).toBe(true);
  });

  test("its signature is over the bytes as sent (binary file parts included)", async () => {
    const secret = `whsec_${random(32).toString("base64")}`;
    const body = await formBody(content.attachments, (contentOf) => toFormData(payloadWith(contentOf), content.attachments, contentOf));
    const key = Buffer.from(secret.slice(6), "base64");
    const expected = new Bun.CryptoHasher("sha256", key)
      .update("key-2.1790000000.")
      .update(await read(body))
      .digest("base64");
    expect(signatureOf(secret, "key-2", 1_790_000_000, body)).toBe(`v1,${expected}`);
  });
});
