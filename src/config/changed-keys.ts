// What a reload changed, by key name only (docs/operations.md, Reloading): the values
// stay out of the log, since many are secrets or their hashes. Compared on the config as
// the file says it (after defaults), so the names are the ones an operator writes; the
// elements of an array of tables that carry an `id` (accounts, outbound accounts) are
// named by it, so adding one account does not report every later one as changed.

type Data = Record<string, unknown>;

const isTable = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);
const idOf = (v: unknown): string | null => (isTable(v) && typeof v.id === "string" ? v.id : null);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The dotted keys whose value differs between `before` and `after`: `accounts[21c3...].rate_limit`. */
export function changedKeys(before: unknown, after: unknown, path = ""): string[] {
  if (same(before, after)) return [];
  if (isTable(before) && isTable(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => changedKeys(before[k], after[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(before) && Array.isArray(after) && [...before, ...after].every((v) => idOf(v) !== null)) {
    const byId = (list: unknown[]) => new Map(list.map((v) => [idOf(v)!, v]));
    const [was, is] = [byId(before), byId(after)];
    const ids = [...new Set([...was.keys(), ...is.keys()])].sort();
    return ids.flatMap((id) => changedKeys(was.get(id), is.get(id), `${path}[${id}]`));
  }
  return [path];
}
