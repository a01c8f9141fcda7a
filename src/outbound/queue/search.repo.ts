// E12's `query` over sent messages as SQL: free text, subject:, from:, to:, status:, tag:
// and created_at comparisons, each a parameterised clause.
import type { SearchTerm } from "../../lib/search-query.ts";
import { termTimeMs } from "../../lib/search-query.ts";
import { containsPattern } from "../../store/paging.ts";

export const MESSAGE_SEARCH_FIELDS = ["status", "to", "from", "subject", "tag", "created_at"] as const;

export function searchClause(terms: readonly SearchTerm[], params: unknown[]): string {
  let sql = "";
  const recipientMatch = (column: string) => `EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.message_id = m.id AND ${column})`;
  for (const t of terms) {
    const like = containsPattern(t.value);
    switch (t.field) {
      case null:
        sql += ` AND (LOWER(COALESCE(m.subject, '')) LIKE ? ESCAPE '\\' OR LOWER(m.mail_from) LIKE ? ESCAPE '\\' OR ${recipientMatch("LOWER(r.email) LIKE ? ESCAPE '\\'")})`;
        params.push(like, like, like);
        break;
      case "subject":
        sql += " AND LOWER(COALESCE(m.subject, '')) LIKE ? ESCAPE '\\'";
        params.push(like);
        break;
      case "from":
        sql += " AND LOWER(m.mail_from) LIKE ? ESCAPE '\\'";
        params.push(like);
        break;
      case "to":
        sql += ` AND ${recipientMatch("LOWER(r.email) LIKE ? ESCAPE '\\'")}`;
        params.push(like);
        break;
      case "status":
        sql += ` AND ${recipientMatch("r.status = ?")}`;
        params.push(t.value.toLowerCase());
        break;
      case "tag":
        // Tags are stored as a JSON array of strings: match one element exactly.
        sql += " AND LOWER(m.tags_json) LIKE ? ESCAPE '\\'";
        params.push(containsPattern(JSON.stringify(t.value.toLowerCase())));
        break;
      case "created_at":
        sql += ` AND m.created_at ${t.op} ?`;
        params.push(termTimeMs(t.value));
        break;
    }
  }
  return sql;
}

