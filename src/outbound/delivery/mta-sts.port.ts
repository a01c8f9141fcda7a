// The port of the MTA-STS policy cache (one policy per recipient domain, kept until it
// expires so a restart cannot strip it, RFC 8461 section 5.1), whatever the engine:
// mta-sts.repo.ts implements it once for SQLite and PostgreSQL, and one contract test
// (test/outbound/mta-sts-repo.contract.test.ts) runs the same cases on both.
import type { StsPolicy } from "./tls-policy.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface StsStore {
  /** The cached policy of `domain` (as stored: the caller lowercases), expired or not; null when none. */
  get(domain: string): Promise<StsPolicy | null>;
  /** Stores `domain`'s policy in place of the one before, stamped with the time it was fetched. */
  put(domain: string, policy: StsPolicy): Promise<void>;
}
