// The pure parts of the OpenAPI document's making: titled schemas become named components,
// and multipart+n's form fields are derived from the json+n payload schema.
import { describe, expect, test } from "bun:test";
import { formFieldsSchema } from "../../src/api/openapi-webhooks.ts";
import { withNamedSchemas, withPlainNumbers } from "../../src/api/openapi-schemas.ts";
import { PayloadSchema } from "../../src/inbound/payload/payload-schema.ts";
import { buildPayload, toFormData, type PayloadEnvelope } from "../../src/inbound/payload/payload.ts";

const thing = { title: "Thing", type: "object", properties: { title: { type: "string" } } };

describe("withNamedSchemas", () => {
  const cases: { name: string; paths: unknown; refs: unknown; schemas: Record<string, unknown> }[] = [
    {
      name: "a titled schema becomes a $ref; a property named title stays",
      paths: { "/a": { get: { schema: thing } } },
      refs: { "/a": { get: { schema: { $ref: "#/components/schemas/Thing" } } } },
      schemas: { Thing: thing },
    },
    {
      name: "nested titled schemas are named inside out, one entry for equal copies",
      paths: { "/a": { list: { type: "array", items: thing }, box: { title: "Box", type: "object", properties: { thing } } } },
      refs: { "/a": { list: { type: "array", items: { $ref: "#/components/schemas/Thing" } }, box: { $ref: "#/components/schemas/Box" } } },
      schemas: { Box: { title: "Box", type: "object", properties: { thing: { $ref: "#/components/schemas/Thing" } } }, Thing: thing },
    },
    {
      name: "a nullable titled schema is the schema or null",
      paths: { "/a": { s: { ...thing, type: ["object", "null"] } } },
      refs: { "/a": { s: { anyOf: [{ $ref: "#/components/schemas/Thing" }, { type: "null" }] } } },
      schemas: { Thing: thing },
    },
    {
      name: "a title on something that is no schema is left alone",
      paths: { "/a": { note: { title: "Not a schema" } } },
      refs: { "/a": { note: { title: "Not a schema" } } },
      schemas: {},
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const out: Record<string, unknown> = withNamedSchemas({ info: { title: "API" }, paths: c.paths, components: { headers: {} } });
      expect(out).toEqual({ info: { title: "API" }, paths: c.refs, components: { headers: {}, schemas: c.schemas } });
    });
  }

  test("two different schemas with one title are refused", () => {
    const other = { ...thing, properties: { name: { type: "string" } } };
    expect(() => withNamedSchemas({ paths: { a: thing, b: other } })).toThrow("two different schemas are titled Thing");
  });
});

describe("withPlainNumbers", () => {
  const numericString = (format: string) => ({ type: "string", format, default: 0 });
  const cases: [string, unknown, unknown][] = [
    [
      "Elysia's integer is the integer",
      { description: "d", anyOf: [numericString("integer"), { type: "integer", minimum: 0 }] },
      { description: "d", type: "integer", minimum: 0 },
    ],
    ["Elysia's number is the number", { anyOf: [numericString("numeric"), { type: "number" }] }, { type: "number" }],
    [
      "inside properties and arrays",
      { properties: { n: { type: "array", items: { anyOf: [numericString("integer"), { type: "integer" }] } } } },
      { properties: { n: { type: "array", items: { type: "integer" } } } },
    ],
    ["another anyOf stays", { anyOf: [{ type: "string" }, { type: "integer" }] }, { anyOf: [{ type: "string" }, { type: "integer" }] }],
    [
      "a string with a date format stays",
      { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
      { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
    ],
  ];
  for (const [name, input, expected] of cases) test(name, () => expect(withPlainNumbers(input as never)).toEqual(expected as never));
});

describe("formFieldsSchema (multipart+n)", () => {
  const form = formFieldsSchema(PayloadSchema);

  test("names each field by its path; nullable fields are optional; values are text", () => {
    expect(form.properties["envelope[spf][result]"]).toMatchObject({ type: "string" });
    expect(form.properties["envelope[tls]"]).toMatchObject({ type: "string", enum: ["true", "false"] });
    expect(form.properties["attachments[][size]"]).toMatchObject({
      type: "array",
      items: { type: "string", pattern: "^(0|[1-9][0-9]*)$" },
    });
    expect(form.required).toContain("envelope[to]");
    expect(form.required).toContain("envelope[dkim][result]");
    for (const optional of ["envelope[tls_cipher]", "envelope[dmarc][policy]", "plain", "envelope[spamd][score]"])
      expect(form.required).not.toContain(optional);
    expect(Object.keys(form.patternProperties).sort()).toEqual([
      "^envelope\\[dkim\\]\\[signatures\\]\\[[0-9]+\\]\\[domain\\]$",
      "^envelope\\[dkim\\]\\[signatures\\]\\[[0-9]+\\]\\[result\\]$",
      "^envelope\\[dkim\\]\\[signatures\\]\\[[0-9]+\\]\\[selector\\]$",
      "^envelope\\[recipients\\]\\[[0-9]+\\]$",
      "^envelope\\[spamd\\]\\[symbols\\]\\[[0-9]+\\]$",
      "^headers\\[[^\\]]+\\]$",
      "^headers\\[[^\\]]+\\]\\[[0-9]+\\]$",
    ]);
  });

  test("every field toFormData writes has its name in the schema", () => {
    const envelope: PayloadEnvelope = {
      to: "a@in.example",
      recipients: ["a@in.example", "b@in.example"],
      from: "s@example.org",
      helo_domain: "mx.example.org",
      remote_ip: "192.0.2.1",
      spf: { result: "pass", domain: "example.org" },
      spamd: { score: "2.5", symbols: ["BAYES_50", "HTML_MESSAGE"], success: true, description: "SpamAssassin score" },
      tls: true,
      tls_cipher: null,
      md5: "0".repeat(32),
      dkim: { result: "pass", signatures: [{ domain: "example.org", selector: "s1", result: "pass" }] },
      dmarc: { result: "pass", domain: "example.org", policy: null },
    };
    const attachment = {
      file_name: "a.txt",
      content_type: "text/plain",
      size: "3",
      disposition: "attachment",
      content_id: "<x@y>",
      url: "https://files.example/a",
    };
    const payload = buildPayload(
      {
        headers: { subject: "Hi", received: ["one", "two"] },
        originalHeaders: { Subject: "Hi", Received: ["one", "two"] },
        plain: "hi",
        attachments: [],
      },
      envelope,
      [attachment],
    );
    const names = [...new Set(toFormData(payload, null).keys())];
    const patterns = Object.keys(form.patternProperties).map((p) => new RegExp(p));
    expect(names.length).toBeGreaterThan(15);
    expect(names.filter((n) => !(n in form.properties) && !patterns.some((p) => p.test(n)))).toEqual([]);
  });
});
