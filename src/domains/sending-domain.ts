// A sending domain of an account: its DKIM keys (RSA and Ed25519), the DNS checks that
// verify it and their state (docs/sending.md, Sending domains). Stored by
// sending-domains.repo.ts; the verification rules are in verification.ts.
export type CheckName = "dkim" | "ed25519" | "return_path" | "spf";

export type DmarcPolicy = "missing" | "none" | "quarantine" | "reject";

/** A sending domain's deliverability health (API.md section 10: a sending domain's `health`). */
export interface DomainHealth {
  dmarc: DmarcPolicy;
  dmarc_record: string | null;
  /** Whether our DKIM signature (d= the sending domain) verifies and aligns with the From domain. */
  dkim_aligned: boolean;
  /** Whether the return path (mta.<domain>, the bounce domain) passes SPF and aligns with the From domain. */
  return_path_aligned: boolean;
  /** What to publish or change for each point that is not right; null when it is. */
  fix: { dmarc: string | null; dkim_aligned: string | null; return_path_aligned: string | null };
  /** Why the DMARC lookup failed (a DNS failure): the policy shown is then the one seen before ("missing" before any). */
  unknown: string | null;
}

export interface SendingDomain {
  id: string;
  accountId: string;
  domain: string;
  dkimSelector: string;
  dkimPublicKey: string;
  dkimPrivateKeyEnc: string;
  ed25519Selector: string;
  ed25519PublicKey: string;
  ed25519PrivateKeyEnc: string;
  checks: Record<CheckName, boolean>;
  /** Why each failing check failed at the last look. */
  reasons: Partial<Record<CheckName, string>>;
  /** DMARC and alignment at the last check (src/domains/dmarc.ts); null until checked. */
  health: DomainHealth | null;
  verifiedAtMs: number | null;
  failingSinceMs: number | null;
  checkedAtMs: number | null;
  nextCheckAtMs: number;
  createdAtMs: number;
}

export class SendingDomainTakenError extends Error {
  override name = "SendingDomainTakenError";
}

export interface CheckOutcome {
  checks: Record<CheckName, boolean>;
  reasons: Partial<Record<CheckName, string>>;
  health: DomainHealth | null;
  verifiedAtMs: number | null;
  failingSinceMs: number | null;
  checkedAtMs: number;
  nextCheckAtMs: number;
}
