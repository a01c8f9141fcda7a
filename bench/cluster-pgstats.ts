// `bench:cluster --pg-statements`: what a PostgreSQL setup's server does per message, from
// pg_stat_statements (Debian's postgresql ships it; it must be in shared_preload_libraries,
// which PG_STATEMENTS_SETTINGS adds). Reset before each measured run and read after it: the
// statements by calls per message, with their mean execution time, rows and WAL bytes, and
// the totals (statements and WAL bytes per message). Off by default: tracking costs the
// server a little CPU per statement, and the figures are for finding where it goes.
import { SQL } from "bun";

export const PG_STATEMENTS_SETTINGS: Record<string, string> = {
  shared_preload_libraries: "pg_stat_statements",
  "pg_stat_statements.track": "top",
  "pg_stat_statements.max": "2000",
  "pg_stat_statements.track_utility": "on",
};

/** Statements printed per run; the rest are summed into one line. */
const TOP = 25;

interface Row {
  query: string;
  calls: string;
  total_exec_time: number;
  rows: string;
  wal_bytes: string;
  shared_blks_hit: string;
}

/** A statement's text with its lists of placeholders (VALUES rows, IN lists) as "(…)", whitespace folded. */
export function familyOf(query: string): string {
  return query.replace(/\s+/g, " ").replace(/\(\s*\$\d+[^()]*\)(\s*,\s*\(\s*\$\d+[^()]*\))*/g, "(…)");
}

export class PgStatements {
  private constructor(private readonly sql: SQL) {}

  static async open(url: string): Promise<PgStatements> {
    const sql = new SQL(url, { max: 1 });
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    return new PgStatements(sql);
  }

  async reset(): Promise<void> {
    await this.sql`SELECT pg_stat_statements_reset()`;
    await this.sql`SELECT pg_stat_reset()`;
  }

  /**
   * Row versions per message by table (inserted, updated, of those HOT: no index entry
   * written) and the index scans since the last reset. Backends send their counts to the
   * statistics at most once a second, so a few land in the next run's figures.
   */
  private async rowVersions(messages: number): Promise<string[]> {
    await Bun.sleep(1500);
    const tables: { relname: string; ins: string; upd: string; hot: string; del: string }[] = await this.sql`
      SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del FROM pg_stat_user_tables
      WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_ins + n_tup_upd DESC`;
    const indexes: { relname: string; indexrelname: string; scans: string }[] = await this.sql`
      SELECT relname, indexrelname, idx_scan AS scans FROM pg_stat_user_indexes
      WHERE relname IN (SELECT relname FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd > 0) ORDER BY relname, indexrelname`;
    const per = (x: string) => (Number(x) / messages).toFixed(2).padStart(6);
    const lines = ["    rows/msg: inserted  updated  (HOT)  deleted  table"];
    for (const t of tables) lines.push(`              ${per(t.ins)}   ${per(t.upd)} ${per(t.hot)}   ${per(t.del)}  ${t.relname}`);
    lines.push(`    index scans/msg: ${indexes.map((i) => `${i.indexrelname} ${per(i.scans).trim()}`).join(", ")}`);
    return lines;
  }

  /**
   * The statements since the last reset, per message of `messages`, as text lines; then
   * resets. Statements that differ only in their number of rows or list items (a
   * multi-row INSERT of 3 rows and of 7, an IN list) are one line, "(…)" in place of the list.
   */
  async report(messages: number, label: string): Promise<string> {
    const rows: Row[] = await this.sql`SELECT query, calls, total_exec_time, rows, wal_bytes, shared_blks_hit FROM pg_stat_statements
      WHERE query NOT LIKE '%pg_stat_statements%'`;
    const versions = await this.rowVersions(messages);
    await this.reset();
    const families = new Map<string, { calls: number; ms: number; rows: number; wal: number; blocks: number }>();
    for (const r of rows) {
      const key = familyOf(r.query);
      const f = families.get(key) ?? { calls: 0, ms: 0, rows: 0, wal: 0, blocks: 0 };
      f.calls += Number(r.calls);
      f.ms += r.total_exec_time;
      f.rows += Number(r.rows);
      f.wal += Number(r.wal_bytes);
      f.blocks += Number(r.shared_blks_hit);
      families.set(key, f);
    }
    const sorted = [...families].sort((a, b) => b[1].calls - a[1].calls);
    const per = (x: number) => x / messages;
    const sum = (pick: (f: { calls: number; ms: number; wal: number }) => number) => sorted.reduce((s, [, f]) => s + pick(f), 0);
    const lines = [
      `  ${label}: ${per(sum((f) => f.calls)).toFixed(2)} statements per message, ${(per(sum((f) => f.ms)) * 1000).toFixed(0)} µs execution (wall), ${per(sum((f) => f.wal)).toFixed(0)} WAL bytes`,
      "    calls/msg  µs/call  rows/call  blocks/call  WAL B/msg  statement",
    ];
    for (const [text, f] of sorted.slice(0, TOP))
      lines.push(
        `    ${per(f.calls).toFixed(3).padStart(9)} ${((f.ms * 1000) / f.calls).toFixed(0).padStart(8)} ${(f.rows / f.calls).toFixed(1).padStart(10)} ${(f.blocks / f.calls).toFixed(0).padStart(12)} ${per(f.wal).toFixed(0).padStart(10)}  ${text.slice(0, 150)}`,
      );
    const rest = sorted.slice(TOP);
    if (rest.length > 0)
      lines.push(
        `    ${per(rest.reduce((s, [, f]) => s + f.calls, 0))
          .toFixed(3)
          .padStart(9)}  (${rest.length} other statements)`,
      );
    lines.push(...versions);
    return lines.join("\n");
  }

  close(): Promise<void> {
    return this.sql.close();
  }
}
