// The operations and records of docs/api.md, made from the OpenAPI document (the
// committed snapshot, which test/api/openapi.test.ts keeps equal to what the server
// serves), so the docs list exactly the published surface. Pure: document in, Markdown out.

type Schema = Record<string, any>;
type Operation = Record<string, any>;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const code = (s: string) => `\`${s}\``;
const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

/** "E1: list addresses, newest first" → ["E1", "list addresses, newest first"]; "(beyond) ..." → ["(beyond)", ...]. */
function numbered(summary: string): [string, string] {
  const e = /^(E\d+): (.*)$/s.exec(summary);
  if (e) return [e[1]!, e[2]!];
  const beyond = /^\(beyond\) (.*)$/s.exec(summary);
  if (beyond) return ["(beyond)", beyond[1]!];
  return ["", summary];
}

function responseSchema(op: Operation, status: string): Schema | null {
  return op.responses?.[status]?.content?.["application/json"]?.schema ?? null;
}

/** "Address", "array of Address", or the type when the schema has no title. */
function schemaName(s: Schema | null): string {
  if (!s) return "";
  if (s.type === "array") return `array of ${schemaName(s.items)}`;
  return s.title ?? (Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? ""));
}

function typeText(s: Schema): string {
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  let base = types.map((t) => (t === "array" ? `array of ${typeText(s.items ?? {}) || "values"}` : t)).join(" or ");
  if (s.enum) base += ` (${s.enum.map((v: unknown) => code(String(v))).join(", ")})`;
  if (s.format) base += `, ${s.format}`;
  if (s.pattern && s.pattern !== "^[^\\x00-\\x1f\\x7f]*$") base += `, ${code(s.pattern)}`;
  return base;
}

export function operationsTable(doc: Schema): string {
  const rows: string[] = [];
  for (const [path, item] of Object.entries<Record<string, Operation>>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const [number, summary] = numbered(op.summary ?? "");
      const auth = (op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)).join(", ") || "none";
      const params = (op.parameters ?? [])
        .filter((p: Schema) => p.in !== "path" || p.name !== "accountId")
        .map((p: Schema) => `${p.in} ${code(p.name)}${p.required ? " (required)" : ""}`)
        .join(", ");
      const statuses = Object.keys(op.responses ?? {});
      const success = statuses
        .filter((s) => s < "400" || responseSchema(op, s)?.title !== "Error")
        .map((s) => `${s} ${schemaName(responseSchema(op, s))}`.trim())
        .join("; ");
      const errors = statuses.filter((s) => s >= "400" && responseSchema(op, s)?.title === "Error").join(", ");
      rows.push(
        `| ${number} | ${code(`${method.toUpperCase()} ${path}`)} | ${cell(summary)} | ${code(op.operationId)} | ${auth} | ${cell(params)} | ${cell(success)} | ${errors} |`,
      );
    }
  }
  return [
    "| # | method and path | what it does | operationId | auth | parameters | success | errors |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Every field of a record, nested ones as `parent.child` and `list[].child`. */
function fieldRows(s: Schema, prefix: string, out: string[]): void {
  const required = new Set<string>(s.required ?? []);
  for (const [name, prop] of Object.entries<Schema>(s.properties ?? {})) {
    const path = `${prefix}${name}`;
    const optional = required.has(name) ? "" : " (optional)";
    out.push(`| ${code(path)} | ${cell(typeText(prop))}${optional} | ${cell(prop.description ?? "")} |`);
    if (prop.properties) fieldRows(prop, `${path}.`, out);
    else if (prop.items?.properties) fieldRows(prop.items, `${path}[].`, out);
  }
}

/** One table per titled record any operation answers with, in the order they first appear. */
export function recordTables(doc: Schema): string {
  const seen = new Map<string, Schema>();
  for (const item of Object.values<Record<string, Operation>>(doc.paths)) {
    for (const method of METHODS) {
      for (const status of Object.keys(item[method]?.responses ?? {})) {
        let s = responseSchema(item[method]!, status);
        if (s?.type === "array") s = s.items;
        if (s?.title && !seen.has(s.title)) seen.set(s.title, s);
      }
    }
  }
  const parts: string[] = [];
  for (const [title, s] of seen) {
    const rows: string[] = [];
    fieldRows(s, "", rows);
    parts.push(
      [`#### ${title}`, "", ...(s.description ? [`${s.description}.`, ""] : []), "| field | type | notes |", "|---|---|---|", ...rows].join(
        "\n",
      ),
    );
  }
  return parts.join("\n\n");
}

export const GENERATED_BEGIN =
  "<!-- generated from test/api/openapi.snapshot.json: UPDATE_SNAPSHOTS=1 bun test test/docs/api-operations.test.ts -->";
export const GENERATED_END = "<!-- end of generated part -->";

/**
 * The document with every schema $ref replaced by the schema it names, and a named schema
 * that may be null ({anyOf: [$ref, null]}) written as its type or null, as the tables read them.
 */
export function dereferenced(doc: Schema): Schema {
  const named: Record<string, Schema> = doc.components?.schemas ?? {};
  const walk = (node: any): any => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== "object") return node;
    if (typeof node.$ref === "string" && node.$ref.startsWith("#/components/schemas/"))
      return walk(named[node.$ref.slice("#/components/schemas/".length)]);
    const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    const anyOf = out.anyOf as Schema[] | undefined;
    if (anyOf?.length === 2 && anyOf[1]?.type === "null" && typeof anyOf[0]?.type === "string") {
      const { anyOf: _, ...rest } = out;
      return { ...rest, ...anyOf[0], type: [anyOf[0].type, "null"] };
    }
    return out;
  };
  return { ...doc, paths: walk(doc.paths) };
}

/** The generated part of docs/api.md, markers included. */
export function generatedApiSection(document: Schema): string {
  const doc = dereferenced(document);
  return [
    GENERATED_BEGIN,
    "",
    "### Operations",
    "",
    operationsTable(doc),
    "",
    "### Records",
    "",
    recordTables(doc),
    "",
    GENERATED_END,
  ].join("\n");
}
