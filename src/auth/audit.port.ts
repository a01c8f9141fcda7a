// The audit log of operator actions (API.md section 10): who (the operator token's label,
// never the token), what, when, and which account. Written in the transaction of the
// change it records (tenants.repo.ts); read newest first by GET /api/v0.1/operator/audit
// and the dashboard's Audit page. audit.repo.ts implements it once for both engines.
import type { Page, PageRequest } from "../store/paging.ts";

export interface AuditEntry {
  id: string;
  createdAtMs: number;
  /** operator.tokenLabel (http/authenticate.ts): `admin_tokens:<first hex of its hash>`. */
  operator: string;
  /** e.g. `account.create`, `api_token.revoke`: AUDIT_ACTIONS. */
  action: AuditAction;
  /** The account the action concerns, or `account/tokens/<id>`-like path of the thing changed. */
  target: string;
  /** What changed, never a secret. */
  details: Record<string, unknown>;
}

export const AUDIT_ACTIONS = [
  "account.create",
  "account.update",
  "account.delete",
  "api_token.create",
  "api_token.revoke",
  "outbound_account.create",
  "outbound_key.create",
  "outbound_key.revoke",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditRepo {
  /** Newest first; `target` narrows to one account's entries (and its credentials'). */
  list(target: string | null, page: PageRequest): Promise<Page<AuditEntry>>;
}
