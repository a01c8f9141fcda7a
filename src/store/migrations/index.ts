// Numbered schema migrations, embedded in the binary. Append only: a released
// migration is never edited, a change is a new file with the next number.
import m0001 from "./0001_init.sql" with { type: "text" };
import m0002 from "./0002_incoming_statuses.sql" with { type: "text" };
import m0003 from "./0003_address_signing.sql" with { type: "text" };
import m0004 from "./0004_outbound.sql" with { type: "text" };
import m0005 from "./0005_sending_domains.sql" with { type: "text" };
import m0006 from "./0006_webhooks_tracking_suppressions.sql" with { type: "text" };
import m0007 from "./0007_mta_sts_outbox_indexes.sql" with { type: "text" };
import m0008 from "./0008_outbound_bodies.sql" with { type: "text" };
import m0009 from "./0009_incoming_statuses_rowid.sql" with { type: "text" };
import { encryptSecretsAtRest } from "./0010_secrets_encrypted.ts";
import m0011 from "./0011_dashboard_sessions.sql" with { type: "text" };
import m0012 from "./0012_incoming_statuses_postroom_message_id.sql" with { type: "text" };
import m0013 from "./0013_stats_hourly.sql" with { type: "text" };
import m0014 from "./0014_idempotency_keys.sql" with { type: "text" };
import m0015 from "./0015_webhook_posts.sql" with { type: "text" };
import m0016 from "./0016_stored_messages.sql" with { type: "text" };
import type { Database } from "bun:sqlite";
import type { SecretBox } from "../../lib/secret-key.ts";

/** What a migration written in code may use besides the database. */
export interface MigrationContext {
  /** Encrypts secrets at rest under data_dir/keys/secrets.key. */
  secrets: SecretBox;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * Work SQL cannot do (encryption), run after `sql` in the same transaction. The store
   * then checkpoints the WAL, and deleted content is overwritten, so that the values it
   * replaced do not stay in the files.
   */
  run?: (db: Database, ctx: MigrationContext) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "init", sql: m0001 },
  { version: 2, name: "incoming_statuses", sql: m0002 },
  { version: 3, name: "address_signing", sql: m0003 },
  { version: 4, name: "outbound", sql: m0004 },
  { version: 5, name: "sending_domains", sql: m0005 },
  { version: 6, name: "webhooks_tracking_suppressions", sql: m0006 },
  { version: 7, name: "mta_sts_outbox_indexes", sql: m0007 },
  { version: 8, name: "outbound_bodies", sql: m0008 },
  { version: 9, name: "incoming_statuses_rowid", sql: m0009 },
  { version: 10, name: "secrets_encrypted", sql: "", run: encryptSecretsAtRest },
  { version: 11, name: "dashboard_sessions", sql: m0011 },
  { version: 12, name: "incoming_statuses_postroom_message_id", sql: m0012 },
  { version: 13, name: "stats_hourly", sql: m0013 },
  { version: 14, name: "idempotency_keys", sql: m0014 },
  { version: 15, name: "webhook_posts", sql: m0015 },
  { version: 16, name: "stored_messages", sql: m0016 },
];
