// A recipient an outbound account no longer sends to, and why: the suppression list's noun,
// apart from its SQL (suppressions.repo.ts).

export type SuppressionReason = "bounce" | "complaint" | "manual";

export interface Suppression {
  id: string;
  accountId: string;
  outboundAccountId: string;
  email: string;
  reason: SuppressionReason;
  details: Record<string, unknown>;
  createdAtMs: number;
}
