// The docs name what the code has: every event kind, every field of the events webhook
// body, every section of the config; and they stand alone: no pointer to files outside the
// repository, and every relative link leads to a file and heading that exist.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { ConfigSchema } from "../../src/config/schema.ts";
import { webhookBody } from "../../src/events/webhook-exchange.ts";
import { INTERNAL_KINDS, LIFECYCLE_KINDS } from "../../src/events/kinds.ts";
import { LOG_FIELDS } from "../../src/lib/log-fields.ts";

const DOCS = new URL("../../docs/", import.meta.url);
const read = (name: string) => readFileSync(new URL(name, DOCS), "utf8");
const docNames = readdirSync(DOCS).filter((n) => n.endsWith(".md"));

/** The part of a page under a heading, up to the next heading of the same level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.split(" ")[0]!;
  const next = markdown.indexOf(`\n${level} `, start + heading.length + 1);
  return markdown.slice(start, next < 0 ? undefined : next);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, "");
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe("event kinds and the webhook body", () => {
  test("every event kind of src/events/kinds.ts is in docs/webhooks.md", () => {
    const webhooks = read("webhooks.md");
    const kinds = [...LIFECYCLE_KINDS, ...INTERNAL_KINDS];
    expect(kinds.length).toBeGreaterThan(10);
    expect(kinds.filter((k) => !webhooks.includes(`\`${k}\``))).toEqual([]);
  });

  test("every lifecycle kind has a row in the table of kinds", () => {
    const table = section(read("webhooks.md"), "## Event kinds");
    const rows = new Set([...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!));
    expect(LIFECYCLE_KINDS.filter((k) => !rows.has(k))).toEqual([]);
  });

  test("every field of a posted event is a row of docs/webhooks.md's field table", () => {
    const body = JSON.parse(
      webhookBody({
        id: "msg_0",
        attempts: 0,
        events: [
          {
            id: "e",
            kind: "delivery",
            recipient: "r@example.org",
            messageId: "m",
            outboundAccountId: "o",
            accountId: "a",
            createdAtMs: 0,
            details: {},
          },
        ],
      }),
    );
    expect(Object.keys(body)).toEqual(["events"]);
    const table = section(read("webhooks.md"), "## Event fields");
    const rows = new Set([...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!));
    expect(Object.keys(body.events[0]).filter((k) => !rows.has(k))).toEqual([]);
  });
});

describe("configuration", () => {
  test("docs/operations.md names every top-level key and every section of the config", () => {
    const operations = section(read("operations.md"), "## Configuration");
    // The schema's top level: scalars by name, tables as [name], arrays of tables as [[name]]...
    const names = Object.entries<any>(ConfigSchema.properties).map(([key, prop]) =>
      prop.type === "object" ? `[${key}]` : prop.type === "array" && prop.items?.type === "object" ? `[[${key}]]` : key,
    );
    // ...and the nested tables config.example.toml (kept in step with the schema) writes.
    const example = readFileSync(new URL("../../config.example.toml", import.meta.url), "utf8");
    for (const [, header] of example.matchAll(/^\s*(\[\[?[a-z_.]+\]\]?)\s*$/gm)) names.push(header!);
    expect(names).toContain("[tls.acme]");
    expect([...new Set(names)].filter((n) => !operations.includes(`\`${n}\``))).toEqual([]);
  });
});

describe("log lines", () => {
  test("docs/operations.md's table of log fields has a row for every field of src/lib/log-fields.ts, and no other", () => {
    const table = section(section(read("operations.md"), "## Log lines"), "### Fields");
    // The first cell of each row names one field or several (`method`, `path`).
    const documented = [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z0-9_]+)`/g)].map((f) => f[1]!));
    expect(documented.length).toBeGreaterThan(20);
    expect([...LOG_FIELDS].filter((f) => !documented.includes(f))).toEqual([]);
    expect(documented.filter((f) => !(LOG_FIELDS as readonly string[]).includes(f))).toEqual([]);
  });
});

describe("the docs stand alone", () => {
  test.each(docNames)("%s points at nothing outside the repository", (name) => {
    const text = read(name);
    expect(text.match(/\.\.\/shared|\/work\/|\b(SPEC|API|DESIGN)\.md\b/g) ?? []).toEqual([]);
  });

  // operations.md once called several nodes on one PostgreSQL "not yet in this version"
  // beside the section that shows how to run them: what this version does is said as done.
  test.each(docNames)("%s announces nothing as coming in a later version", (name) => {
    expect(read(name).match(/[^.]*\b(not\s+yet\s+in\s+this\s+version|in\s+a\s+(later|future)\s+version)\b[^.]*/gi) ?? []).toEqual([]);
  });

  test.each(docNames)("%s: every relative link leads to a file and heading that exist", (name) => {
    const text = read(name).replace(/```[\s\S]*?```/g, "");
    const broken: string[] = [];
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(link!)) continue;
      const [file, anchor] = link!.split("#") as [string, string | undefined];
      const path = new URL(file || name, DOCS);
      if (!existsSync(path)) {
        broken.push(link!);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(readFileSync(path, "utf8")).has(anchor)) broken.push(link!);
    }
    expect(broken).toEqual([]);
  });
});
