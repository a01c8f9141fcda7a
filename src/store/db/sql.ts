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

/**
 * The strings of a join of `count` pieces by `separator`, one array per pair: a query is
 * known by the identity of its strings (render's shape), so a new array at every call made
 * every join a new shape, its statement prepared afresh each time (issue 38: the hourly
 * counts' multi-row upsert on every delivery).
 */
const joinStrings = new Map<string, readonly string[]>();
function joinStringsOf(count: number, separator: string): readonly string[] {
  const key = `${count}\u0000${separator}`;
  let strings = joinStrings.get(key);
  if (!strings) {
    strings = ["", ...Array.from({ length: count - 1 }, () => separator), ""];
    if (joinStrings.size >= SHAPES_KEPT) joinStrings.clear();
    joinStrings.set(key, strings);
  }
  return strings;
}

/** Pieces joined by `separator` (text from the code): join([sql`a = ${1}`, sql`b = ${2}`], " AND "). */
export function join(pieces: readonly Sql[], separator: string): Sql {
  if (pieces.length === 0) return empty;
  return new Sql(joinStringsOf(pieces.length, separator), pieces);
}

/** A rendered query: the text in one engine's placeholders and its parameters in order. */
export interface Rendered {
  text: string;
  params: SqlValue[];
  /**
   * What the text depends on besides the engine: an object for a query whose pieces hold no
   * value (its call site with those pieces), else a string (its call sites, names and list
   * lengths). The same key renders to the same text, so a driver may keep a statement by it.
   */
  key: object | string;
}

// Most queries render to the same text at every call: a tagged template's strings array is
// one object per call site, and the pieces it interpolates, when they hold no value (a
// column list, a collation), are the same module constants. Such a query is known by its
// site and the identity of its pieces, without a walk. Any other query is known by its
// shape; shapes are few (call sites times list lengths), and their cache is emptied should
// they ever grow past SHAPES_KEPT.
interface Site {
  /** The piece at each value's place (undefined where a value is bound). */
  pieces: unknown[];
  text: Partial<Record<Placeholders, string>>;
}
const sites = new WeakMap<readonly string[], Site>();
const shapedText: Record<Placeholders, Map<string, string>> = { sqlite: new Map(), postgres: new Map() };
export const SHAPES_KEPT = 10_000;

/** The text and parameters of `query` for `style`; throws on a value no driver binds the same on both engines. */
export function render(query: Sql, style: Placeholders): Rendered {
  const site = staticSite(query);
  if (site) {
    const { values } = query;
    const params: SqlValue[] = [];
    for (let i = 0; i < values.length; i++) if (site.pieces[i] === undefined) params.push(bindable(values[i]));
    let text = site.text[style];
    if (text === undefined) {
      const out = { text: "", params: [] as SqlValue[] };
      append(query, style, out);
      text = site.text[style] = out.text;
    }
    return { text, params, key: site };
  }
  const params: SqlValue[] = [];
  const shape = shapeOf(query, params);
  const texts = shapedText[style];
  let text = texts.get(shape);
  if (text === undefined) {
    const out = { text: "", params: [] as SqlValue[] };
    append(query, style, out);
    text = out.text;
    if (texts.size >= SHAPES_KEPT) texts.clear();
    texts.set(shape, text);
  }
  return { text, params, key: shape };
}

const isPiece = (v: unknown): boolean => typeof v === "object" && v !== null && !(v instanceof Uint8Array);

/** A piece whose text never changes: no bound value and no list in it. */
const isStatic = (v: unknown): boolean =>
  v instanceof Identifier || v instanceof EnginePiece || (v instanceof Sql && v.values.every((x) => isPiece(x) && isStatic(x)));

/** The site of `query` when its pieces hold no value (kept for the next call with the same pieces), else null. */
function staticSite(query: Sql): Site | null {
  const { values } = query;
  const known = sites.get(query.strings);
  if (known) {
    let same = true;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (isPiece(v) ? known.pieces[i] !== v : known.pieces[i] !== undefined) {
        same = false;
        break;
      }
    }
    if (same) return known;
  }
  const pieces: unknown[] = [];
  for (const v of values) {
    if (!isPiece(v)) pieces.push(undefined);
    else if (isStatic(v)) pieces.push(v);
    else return null;
  }
  const site: Site = { pieces, text: {} };
  sites.set(query.strings, site);
  return site;
}

const objectIds = new WeakMap<object, number>();
let lastObjectId = 0;
function objectId(o: object): number {
  let n = objectIds.get(o);
  if (n === undefined) {
    n = ++lastObjectId;
    objectIds.set(o, n);
  }
  return n;
}

/** The shape of `query` (see Rendered.shape); pushes its parameters, in order, onto `params`. */
function shapeOf(query: Sql, params: SqlValue[]): string {
  let key = `${objectId(query.strings)}(`;
  for (const v of query.values) {
    if (v instanceof Sql) key += shapeOf(v, params);
    else if (v instanceof Identifier) key += `"${v.name}"`;
    else if (v instanceof EnginePiece) key += `#${objectId(v)}`;
    else if (v instanceof InList) {
      key += `[${v.column.name} ${v.values.length}]`;
      for (const x of v.values) params.push(bindable(x));
    } else {
      key += ",";
      params.push(bindable(v));
    }
  }
  return `${key})`;
}

function append(query: Sql, style: Placeholders, out: { text: string; params: SqlValue[] }): void {
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

function bind(value: unknown, style: Placeholders, out: { text: string; params: SqlValue[] }): string {
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
