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
  }

  /** The statements since the last reset, per message of `messages`, as text lines; then resets. */
  async report(messages: number, label: string): Promise<string> {
    const rows: Row[] = await this.sql`SELECT query, calls, total_exec_time, rows, wal_bytes FROM pg_stat_statements
      WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC`;
    await this.reset();
    const per = (x: number) => x / messages;
    const calls = rows.reduce((s, r) => s + Number(r.calls), 0);
    const wal = rows.reduce((s, r) => s + Number(r.wal_bytes), 0);
    const exec = rows.reduce((s, r) => s + r.total_exec_time, 0);
    const lines = [
      `  ${label}: ${per(calls).toFixed(2)} statements per message, ${((per(exec) * 1000) | 0).toString()} µs execution, ${per(wal).toFixed(0)} WAL bytes`,
      `    calls/msg   µs/call  rows/call  WAL B/msg  statement`,
    ];
    for (const r of rows.slice(0, TOP)) {
      const n = Number(r.calls);
      const text = r.query.replace(/\s+/g, " ").slice(0, 150);
      lines.push(
        `    ${per(n).toFixed(3).padStart(9)} ${((r.total_exec_time * 1000) / n).toFixed(0).padStart(9)} ${(Number(r.rows) / n).toFixed(1).padStart(10)} ${per(Number(r.wal_bytes)).toFixed(0).padStart(10)}  ${text}`,
      );
    }
    const rest = rows.slice(TOP);
    if (rest.length > 0)
      lines.push(
        `    ${per(rest.reduce((s, r) => s + Number(r.calls), 0))
          .toFixed(3)
          .padStart(9)}  (${rest.length} other statements)`,
      );
    return lines.join("\n");
  }

  close(): Promise<void> {
    return this.sql.close();
  }
}
