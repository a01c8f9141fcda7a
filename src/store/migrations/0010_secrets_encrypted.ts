// Secrets kept encrypted at rest under data_dir/keys/secrets.key, as DKIM keys are: the
// Basic password of address targets and of custom domain targets, the S3 secret key in
// an address's attachment store, and the address's Standard Webhooks signing secret.
// Rows written before this migration held them in clear; it encrypts them in place.
import type { Database } from "bun:sqlite";
import type { MigrationContext } from "./index.ts";

interface AddressRow {
  id: string;
  target_password: string | null;
  attachments_json: string;
  signing_secret: string | null;
}

export function encryptSecretsAtRest(db: Database, { secrets }: MigrationContext): void {
  const seal = (v: string | null) => (v === null ? null : secrets.seal(v));
  const update = db.query("UPDATE addresses SET target_password = ?, attachments_json = ?, signing_secret = ? WHERE id = ?");
  for (const r of db.query("SELECT id, target_password, attachments_json, signing_secret FROM addresses").all() as AddressRow[]) {
    const attachments = JSON.parse(r.attachments_json) as { secret_access_key?: string };
    if (attachments.secret_access_key) attachments.secret_access_key = secrets.seal(attachments.secret_access_key);
    update.run(seal(r.target_password), JSON.stringify(attachments), seal(r.signing_secret), r.id);
  }
  const updateDomain = db.query("UPDATE custom_domains SET domain_target_password = ? WHERE id = ?");
  for (const r of db.query("SELECT id, domain_target_password FROM custom_domains WHERE domain_target_password IS NOT NULL").all() as { id: string; domain_target_password: string }[]) {
    updateDomain.run(secrets.seal(r.domain_target_password), r.id);
  }
}
