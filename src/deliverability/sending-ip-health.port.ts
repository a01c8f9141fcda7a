// The port through which the sending IPs' health is kept, whatever the engine:
// sending-ip-health.repo.ts implements it once for SQLite and PostgreSQL, and
// test/deliverability/sending-ip-health-repo.contract.test.ts runs the same cases on both.
import type { SendingIpHealth } from "./sending-ip.ts";

/** Promise-returning on every engine. */
export interface SendingIpHealthRepo {
  /** Replaces every row with these (the addresses of the check just made; others are gone). */
  replaceAll(rows: readonly SendingIpHealth[]): Promise<void>;
  /** Every address's last check, by address. */
  list(): Promise<SendingIpHealth[]>;
}
