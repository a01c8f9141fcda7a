// The query builder every engine-neutral repository writes its SQL with: a tagged
// template, sql`SELECT ... WHERE id = ${id}`, whose text comes only from the code and whose
// every value is a bound parameter. Pieces compose: a Sql interpolated into another is
// inlined (its own values stay bound), inList(column, values) expands to column IN (?, ?, ...), id(name)
// is a checked identifier, and an EnginePiece is text that differs by engine (dialect.ts).
// render() turns a query into the text and parameters of one engine's placeholders.

/** Which placeholders a rendered query uses: SQLite's `?`, PostgreSQL's `$1, $2, ...`. */
export type Placeholders = "sqlite" | "postgres";

/** A bound value as the drivers take it. Booleans are bound as 1/0: flags are INTEGER columns on both engines. */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/** A query or a piece of one; build it with the `sql` tag, never from a string. */
export class Sql {
  /** @internal Use the `sql` tag. */
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

/** An identifier (table or column name) from the code; id() checks its spelling. */
class Identifier {
  constructor(readonly name: string) {}
}

/** `column IN (...)` over a list of values, each bound; an empty list is false. */
class InList {
  constructor(
    readonly column: Identifier,
    readonly values: readonly SqlValue[],
  ) {}
}

/** Text that differs by engine, from the code (dialect.ts). */
export class EnginePiece {
  constructor(readonly text: Readonly<Record<Placeholders, string>>) {}
}

export class SqlBuildError extends Error {
  override name = "SqlBuildError";
}

/** The tag: sql`SELECT * FROM t WHERE id = ${id}`. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** The empty piece, for a condition left out: sql`... ${filter ? sql`AND x = ${x}` : empty}`. */
export const empty: Sql = new Sql([""], []);

const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * A table or column name to put into the text (not a value). Only lower-case words (and
 * table.column) pass, so a name cannot carry SQL; still, pass only names from the code.
 */
export function id(name: string): Identifier {
  if (typeof name !== "string" || !IDENTIFIER.test(name)) throw new SqlBuildError(`not an identifier: ${JSON.stringify(name)}`);
  return new Identifier(name);
}

/**
 * `column IN (...)` with each value bound: sql`WHERE ${inList("id", ids)}`. With no value it
 * is false (1 = 0): `IN ()` is no SQL on PostgreSQL, and the negation, sql`NOT (${...})`,
 * is then true for every row, as NOT IN of nothing is.
 */
export const inList = (column: string, values: readonly SqlValue[]): InList => new InList(id(column), values);

/** Pieces joined by `separator` (text from the code): join([sql`a = ${1}`, sql`b = ${2}`], " AND "). */
export function join(pieces: readonly Sql[], separator: string): Sql {
  if (pieces.length === 0) return empty;
  const strings = ["", ...Array.from({ length: pieces.length - 1 }, () => separator), ""];
  return new Sql(strings, pieces);
}

/** A rendered query: the text in one engine's placeholders and its parameters in order. */
export interface Rendered {
  text: string;
  params: SqlValue[];
}

// A query without pieces renders to the same text each time: its strings array is the
// same object at each call site (a tagged template's), so the text is kept by it.
const flatText: Record<Placeholders, WeakMap<readonly string[], string>> = { sqlite: new WeakMap(), postgres: new WeakMap() };

/** The text and parameters of `query` for `style`; throws on a value no driver binds the same on both engines. */
export function render(query: Sql, style: Placeholders): Rendered {
  if (isFlat(query)) {
    const params = query.values.map(bindable);
    let text = flatText[style].get(query.strings);
    if (text === undefined) {
      text = query.strings.reduce((t, s, i) => (i === 0 ? s : `${t}${placeholder(style, i)}${s}`), "");
      flatText[style].set(query.strings, text);
    }
    return { text, params };
  }
  const out: Rendered = { text: "", params: [] };
  append(query, style, out);
  return out;
}

/** True when `query` has no piece (only values): its text is the same at every call of its site. */
export function isFlat(query: Sql): boolean {
  for (const v of query.values) if (typeof v === "object" && v !== null && !(v instanceof Uint8Array)) return false;
  return true;
}

function append(query: Sql, style: Placeholders, out: Rendered): void {
  const { strings, values } = query;
  out.text += strings[0];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v instanceof Sql) append(v, style, out);
    else if (v instanceof Identifier) out.text += v.name;
    else if (v instanceof EnginePiece) out.text += v.text[style];
    else if (v instanceof InList) {
      if (v.values.length === 0) out.text += "(1 = 0)";
      else out.text += `${v.column.name} IN (${v.values.map((x) => bind(x, style, out)).join(", ")})`;
    } else out.text += bind(v, style, out);
    out.text += strings[i + 1];
  }
}

function bind(value: unknown, style: Placeholders, out: Rendered): string {
  out.params.push(bindable(value));
  return placeholder(style, out.params.length);
}

const placeholder = (style: Placeholders, n: number): string => (style === "sqlite" ? "?" : `$${n}`);

function bindable(value: unknown): SqlValue {
  switch (typeof value) {
    case "string":
    case "bigint":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new SqlBuildError(`cannot bind ${value}: not a finite number`);
      return value;
    case "boolean":
      return value ? 1 : 0;
    case "object":
      if (value === null || value instanceof Uint8Array) return value;
      throw new SqlBuildError("cannot bind an object: build SQL pieces with sql``, id() or inList(), and JSON.stringify a document");
    default:
      throw new SqlBuildError(`cannot bind ${typeof value}: pass null for NULL`);
  }
}
