// A list's search on SQLite as slices (sliced-search.ts): the two queries a slice needs,
// over one list's table and scope. Apart from paging.ts, which the slices import.
import type { Database, Statement } from "bun:sqlite";
import { beforeCursor } from "./paging.ts";
import type { SliceReader } from "./sliced-search.ts";

/**
 * A list's search on SQLite, read a slice at a time (sliced-search.ts): `from` is a table
 * and the WHERE over the list's scope (with `scopeParams`), `search` the search terms'
 * clause (with its params), `columns` what a match returns.
 */
export function sqliteSliceReader<Row>(
  db: Database,
  list: { from: string; scopeParams: readonly unknown[]; columns: string; prefix?: string },
  search: { where: string; params: readonly unknown[] },
): SliceReader<Row> {
  const { from, scopeParams, columns, prefix = "" } = list;
  const order = ` ORDER BY ${prefix}created_at DESC, ${prefix}id DESC`;
  // The matches' SQL depends on the query's terms: prepared for this search only, not kept
  // in the connection's statement cache (db.query), which a stream of ever new term
  // combinations would grow without end.
  const prepared = new Map<string, Statement>();
  const statement = (sql: string): Statement => prepared.get(sql) ?? prepared.set(sql, db.prepare(sql)).get(sql)!;
  return {
    edge(before, rows) {
      const params = [...scopeParams];
      const where = beforeCursor({ limit: 0, before }, params, prefix);
      const edge = db
        .query(`SELECT ${prefix}created_at AS created_at, ${prefix}id AS id FROM ${from}${where}${order} LIMIT 1 OFFSET ?`)
        .get(...(params as never[]), rows - 1) as {
        created_at: number;
        id: string;
      } | null;
      return edge ? { createdAtMs: edge.created_at, id: edge.id } : null;
    },
    matches(before, edge, limit) {
      const params = [...scopeParams];
      let where = "";
      if (edge) {
        params.push(edge.createdAtMs, edge.createdAtMs, edge.createdAtMs, edge.id);
        // `created_at >= ?` bounds the index range (the OR alone would be tested on every entry to the end of the list).
        where = ` AND ${prefix}created_at >= ? AND (${prefix}created_at > ? OR (${prefix}created_at = ? AND ${prefix}id >= ?))`;
      }
      params.push(...search.params);
      where += search.where + beforeCursor({ limit: 0, before }, params, prefix);
      return statement(`SELECT ${columns} FROM ${from}${where}${order} LIMIT ?`).all(...(params as never[]), limit) as Row[];
    },
  };
}
