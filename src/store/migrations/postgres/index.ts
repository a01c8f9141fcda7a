// PostgreSQL's schema migrations, kept in step with SQLite's (../index.ts): the same
// versions and names, each file the same change translated to PostgreSQL. Append only, as
// there; a change to the schema is a new file in both histories, in the same commit
// (test/store/schema-parity.test.ts compares the schemas both make).
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
import type { Migration } from "../index.ts";

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
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
