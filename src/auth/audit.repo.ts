// SQL for the operator audit log: the AuditRepo port (audit.port.ts), written once for both
// engines against a Db. Entries are written by recordAudit inside the transaction of the
// change they record (tenants.repo.ts), so a change and its entry commit together.
import type { Db } from "../store/db/db.ts";
import { toInt } from "../store/db/dialect.ts";
import { newestFirst } from "../store/db/paging.ts";
import { empty, sql } from "../store/db/sql.ts";
import { toPage } from "../store/paging.ts";
import type { AuditAction, AuditEntry, AuditRepo } from "./audit.port.ts";

interface Row {
  id: string;
  created_at: unknown;
  operator: string;
  action: string;
  target: string;
  details_json: string;
}

const fromRow = (r: Row): AuditEntry => ({
  id: r.id,
  createdAtMs: toInt(r.created_at, "operator_audit.created_at"),
  operator: r.operator,
  action: r.action as AuditAction,
  target: r.target,
  details: JSON.parse(r.details_json) as Record<string, unknown>,
});

/** Writes `entry` through `tx` (the transaction of the change it records). */
export async function recordAudit(tx: Db, entry: AuditEntry): Promise<void> {
  await tx.run(sql`INSERT INTO operator_audit (id, created_at, operator, action, target, details_json)
    VALUES (${entry.id}, ${entry.createdAtMs}, ${entry.operator}, ${entry.action}, ${entry.target}, ${JSON.stringify(entry.details)})`);
}

export function createAuditRepo(db: Db): AuditRepo {
  return {
    async list(target, page) {
      const { where, tail } = newestFirst(page);
      const only = target === null ? empty : sql`AND target = ${target}`;
      const rows = await db.all<Row>(sql`SELECT * FROM operator_audit WHERE 1 = 1 ${only} ${where} ${tail}`);
      return toPage(rows.map(fromRow), page.limit);
    },
  };
}
