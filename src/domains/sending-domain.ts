// A sending domain of an account: its DKIM keys (RSA and Ed25519), the DNS checks that
// verify it and their state (docs/sending.md, Sending domains). Stored by
// sending-domains.repo.ts; the verification rules are in verification.ts.
import type { DomainHealth } from "./dmarc.ts";

export type CheckName = "dkim" | "ed25519" | "return_path" | "spf";

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
