// Numbered schema migrations, embedded in the binary. Append only: a released
// migration is never edited, a change is a new file with the next number.
import m0001 from "./0001_initial.sql" with { type: "text" };
import m0002 from "./0002_job_leases.sql" with { type: "text" };
import m0003 from "./0003_tls_store.sql" with { type: "text" };
import m0004 from "./0004_blobs.sql" with { type: "text" };
import m0005 from "./0005_rate_counters.sql" with { type: "text" };
import m0006 from "./0006_warmup_counts.sql" with { type: "text" };
import m0007 from "./0007_destinations.sql" with { type: "text" };
import m0008 from "./0008_queue_control.sql" with { type: "text" };
import m0009 from "./0009_tenants.sql" with { type: "text" };
import m0010 from "./0010_webhook_endpoints.sql" with { type: "text" };
import m0011 from "./0011_scheduled_sends.sql" with { type: "text" };
import m0012 from "./0012_inbound_queue.sql" with { type: "text" };
import m0013 from "./0013_deliverability_health.sql" with { type: "text" };
import m0014 from "./0014_queue_storage.sql" with { type: "text" };

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "initial", sql: m0001 },
  { version: 2, name: "job_leases", sql: m0002 },
  { version: 3, name: "tls_store", sql: m0003 },
  { version: 4, name: "blobs", sql: m0004 },
  { version: 5, name: "rate_counters", sql: m0005 },
  { version: 6, name: "warmup_counts", sql: m0006 },
  { version: 7, name: "destinations", sql: m0007 },
  { version: 8, name: "queue_control", sql: m0008 },
  { version: 9, name: "tenants", sql: m0009 },
  { version: 10, name: "webhook_endpoints", sql: m0010 },
  { version: 11, name: "scheduled_sends", sql: m0011 },
  { version: 12, name: "inbound_queue", sql: m0012 },
  { version: 13, name: "deliverability_health", sql: m0013 },
  { version: 14, name: "queue_storage", sql: m0014 },
];

/**
 * The first migration's name in databases made by builds before the first release, whose
 * sixteen migrations became "initial": no release wrote one, so none is upgraded.
 */
export const PRE_RELEASE_FIRST_MIGRATION = "init";
