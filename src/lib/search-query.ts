// The `query` parameter of E6 and E12 (docs/api.md, Search): whitespace-separated terms,
// all of which must match. `field:value` matches one field, a bare word matches the
// default fields, "quoted phrases" keep their spaces, and `*` or empty matches all.

export type Comparison = "=" | ">=" | "<=" | ">" | "<";

export interface SearchTerm {
  /** null for a bare word. */
  field: string | null;
  op: Comparison;
  value: string;
}

export class SearchQueryError extends Error {
  override name = "SearchQueryError";
}

// A field may be a metadata key (`metadata.order_id`, issue 34): the key keeps its case.
const TOKEN = /\s*(?:([A-Za-z_]+|metadata\.[A-Za-z0-9_]+):)?(?:"([^"]*)"|([^\s"]+))/y;

/**
 * Terms of `query`; throws SearchQueryError naming what is wrong. At most `maxTerms` terms
 * (http.search_max_terms): each is tested on every record a search reads, so 80 of them
 * made one search of 40,000 messages take 19 s.
 */
export function parseSearchQuery(
  query: string | null | undefined,
  fields: readonly string[],
  maxTerms = Number.POSITIVE_INFINITY,
): SearchTerm[] {
  const terms = readTerms(query, fields);
  if (terms.length > maxTerms) {
    throw new SearchQueryError(
      `at most ${maxTerms} terms, not ${terms.length} (http.search_max_terms): search for fewer words, or narrow by a field (from:, to:, created_at:>=...)`,
    );
  }
  return terms;
}

/** The field as written: its name folded to lower case, a sub-field (after the dot) as it is. */
function fieldOf(written: string | undefined): string | null {
  if (written === undefined) return null;
  const dot = written.indexOf(".");
  return dot < 0 ? written.toLowerCase() : `${written.slice(0, dot).toLowerCase()}${written.slice(dot)}`;
}

/** A field is known when the list names it, or names `<name>.*` for its sub-fields. */
function known(field: string, fields: readonly string[]): boolean {
  const dot = field.indexOf(".");
  return dot < 0 ? fields.includes(field) : fields.includes(`${field.slice(0, dot)}.*`);
}

function readTerms(query: string | null | undefined, fields: readonly string[]): SearchTerm[] {
  const text = (query ?? "").trim();
  if (text === "" || text === "*") return [];
  const terms: SearchTerm[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new SearchQueryError(`cannot read the query from "${text.slice(start).trim()}" (an unclosed quote?)`);
    const field = fieldOf(m[1]);
    let value = m[2] ?? m[3] ?? "";
    if (field !== null && !known(field, fields)) throw new SearchQueryError(`unknown field "${field}" (known: ${fields.join(", ")})`);
    let op: Comparison = "=";
    const cmp = field !== null ? /^(>=|<=|>|<)(.*)$/.exec(value) : null;
    if (cmp) {
      op = cmp[1] as Comparison;
      value = cmp[2]!;
    }
    if (value === "*" && field === null) continue;
    terms.push({ field, op, value });
    if (text.slice(TOKEN.lastIndex).trim() === "") break;
  }
  return terms;
}

/** A date or date-time term value to epoch milliseconds; null when it is not one. */
export function termTimeMs(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return null;
  const ms = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  return Number.isNaN(ms) ? null : ms;
}
