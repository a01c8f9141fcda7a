// The `webhooks` of the served OpenAPI document describe what Postroom really posts. Real
// POSTs of a running appliance are checked with Ajv (JSON Schema 2020-12) against the
// schemas the document gives: a DKIM-signed message with an inline image and an attachment
// received by json+n and multipart+n addresses (attachments embedded and stored), and the
// events of a message sent through E11 and delivered to an SMTP sink (E10).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import { bearer, basic, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { sendSampleReply } from "../helpers/sample-reply.ts";
import { TestTarget, type Received } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const ADDRESSES = [
  ["/json-embedded", "json+n", {}],
  ["/json-stored", "json+n", { store: "local" }],
  ["/form-embedded", "multipart+n", {}],
  ["/form-stored", "multipart+n", { store: "local" }],
] as const;

let t: TestApp;
let target: TestTarget;
let dns: TestDnsServer;
let sink: SmtpSink;
let doc: Record<string, any>;
let ajv: Ajv2020;

/** The request body schema the document gives a webhook, as an Ajv validator. */
function bodyValidator(webhook: string, mediaType: string) {
  expect(doc.webhooks[webhook].post.requestBody.content[mediaType].schema).toBeDefined();
  return ajv.compile({ $ref: `openapi.json#/webhooks/${webhook}/post/requestBody/content/${mediaType.replace("/", "~1")}/schema` });
}

/** The header parameters the document says a webhook's POST always carries, missing from a real one. */
function missingHeaders(webhook: string, post: Received): string[] {
  const params = doc.webhooks[webhook].post.parameters as { in: string; name: string; required: boolean }[];
  const required = params.filter((p) => p.in === "header" && p.required).map((p) => p.name.toLowerCase());
  expect(required.length).toBeGreaterThan(0);
  return required.filter((name) => post.headers[name] === undefined);
}

/** A multipart+n body as the object its schema describes: a field sent once is a string, unless the schema says it may repeat. */
async function formObject(r: Received, schema: Record<string, any>): Promise<Record<string, unknown>> {
  const form = await TestTarget.formData(r);
  const out: Record<string, unknown> = {};
  for (const name of new Set(form.keys())) {
    const values = form.getAll(name).map((v) => (typeof v === "string" ? v : `(file ${v.name}, ${v.size} bytes)`));
    out[name] = schema.properties[name]?.type === "array" ? values : values.length === 1 ? values[0] : values;
  }
  return out;
}

beforeAll(async () => {
  target = TestTarget.start();
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    inbound: true,
    dnsServer: dns.address,
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${target.url("/events")}", token = "hook-token" }` }],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: "[webhooks]\nallow_private = true",
  });
  const res = await t.call("GET", "/api/v0.1/openapi.json");
  doc = (await res.json()) as Record<string, any>;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, "openapi.json");
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await sink.stop();
  await dns.stop();
});

describe("the webhooks of the OpenAPI document", () => {
  test("inboundMessage: real json+n and multipart+n POSTs match their schemas", async () => {
    const emails: string[] = [];
    for (const [path, format, attachments] of ADDRESSES) {
      const res = await t.json("POST", `${A}/addresses`, {
        auth: bearer(ACCOUNT_A.token),
        body: { target: target.url(path), target_format: format, attachments },
      });
      expect(res.status).toBe(201);
      emails.push(res.body.email);
    }
    await sendSampleReply(t.app.inboundPort!, emails);

    const json = bodyValidator("inboundMessage", "application/json");
    for (const path of ["/json-embedded", "/json-stored"]) {
      const [post] = target.at(path);
      expect(post!.json.attachments.length).toBe(2);
      expect(missingHeaders("inboundMessage", post!)).toEqual([]);
      json(post!.json);
      expect({ path, errors: json.errors ?? [] }).toEqual({ path, errors: [] });
    }
    const formSchema = doc.components.schemas.InboundPayloadForm;
    const form = bodyValidator("inboundMessage", "multipart/form-data");
    for (const path of ["/form-embedded", "/form-stored"]) {
      const [post] = target.at(path);
      expect(post!.contentType).toStartWith("multipart/form-data");
      const fields = await formObject(post!, formSchema);
      expect(
        Object.keys(fields)
          .filter((k) => k.startsWith("attachments[]"))
          .sort(),
      ).toEqual(
        path === "/form-embedded"
          ? ["attachments[]"]
          : [
              "attachments[][content_id]",
              "attachments[][content_type]",
              "attachments[][disposition]",
              "attachments[][file_name]",
              "attachments[][size]",
              "attachments[][url]",
            ],
      );
      form(fields);
      expect({ path, errors: form.errors ?? [] }).toEqual({ path, errors: [] });
    }
  });

  test("inboundMessage: a payload that breaks the schema is refused by it (the check can fail)", () => {
    const json = bodyValidator("inboundMessage", "application/json");
    const [post] = target.at("/json-embedded");
    // size is a decimal string (as the hosted service sends it): a number breaks the schema.
    expect(json({ ...post!.json, attachments: [{ ...post!.json.attachments[0], size: 123 }] })).toBe(false);
    expect(json({ ...post!.json, envelope: { ...post!.json.envelope, tls: "yes" } })).toBe(false);
    const form = bodyValidator("inboundMessage", "multipart/form-data");
    expect(form({ "envelope[to]": "a@b.c", "envelope[unknown]": "x" })).toBe(false);
  });

  test("messageEvents (E10): the events of a delivered message match their schema", async () => {
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
    const sent = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: basic(ACCOUNT_A.outboundId, ACCOUNT_A.smtpKey),
      body: { from: "news@sender.test", to: ["reader@example.org"], subject: "Hello", plain: "Hi there", tags: ["t1"] },
    });
    expect(sent.status).toBe(202);
    const events = await eventually(() => {
      const kinds = target.at("/events").flatMap((p) => p.json.events.map((e: { kind: string }) => e.kind));
      return kinds.includes("delivery") ? target.at("/events") : null;
    });
    expect(events[0]!.headers.authorization).toBe("Bearer hook-token");
    const validate = bodyValidator("messageEvents", "application/json");
    for (const post of events) {
      expect(missingHeaders("messageEvents", post)).toEqual([]);
      validate(post.json);
      expect(validate.errors ?? []).toEqual([]);
    }
    expect(validate({ events: [{ ...events[0]!.json.events[0], kind: "process" }] })).toBe(false);
  });
});
