// Migration 10 encrypts the secrets that older versions kept in clear: target passwords
// (addresses and custom domains), S3 secret keys and signing secrets. Rows written before
// it stay readable, the clear values leave the database files, and new rows are encrypted.
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createAddressRepo } from "../../src/inbound/addresses.repo.ts";
import { createCustomDomainRepo } from "../../src/inbound/custom-domains.repo.ts";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const newDir = tempDirsPerTest();

const ACCOUNT = "a000000000000001";
const PASSWORD = "old-target-pass-7f3a";
const S3_SECRET = "old-s3-secret-9c1d";
const SIGNING = "whsec_b2xkLXNpZ25pbmctc2VjcmV0LTQ0MmU=";
const DOMAIN_PASSWORD = "old-domain-pass-5b8e";

/** Every byte Postroom keeps of the database: the file, its WAL and its shared memory. */
function databaseBytes(dir: string): string {
  return ["postroom.db", "postroom.db-wal", "postroom.db-shm"]
    .map((f) => `${dir}/${f}`)
    .filter(existsSync)
    .map((p) => readFileSync(p).toString("latin1"))
    .join("");
}

test("secrets stored in clear before migration 10 are encrypted by it, stay readable, and leave the files", async () => {
  const dir = newDir();
  const before = openStore(dir, MIGRATIONS.filter((m) => m.version < 10));
  // Rows as the versions before migration 10 wrote them.
  const insertAddress = before.db.query(
    "INSERT INTO addresses (id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, 'json+n', NULL, ?, ?, 1000, 1000, ?)",
  );
  const s3 = { store: "s3", bucket: "mail-files", region: "us-east-1", access_key_id: "AKOLD", secret_access_key: S3_SECRET };
  insertAddress.run("a1a1a1a1a1a1a1a1a1a1", ACCOUNT, "https://bob@hooks.example/in", PASSWORD, JSON.stringify(s3), SIGNING, null);
  insertAddress.run("b2b2b2b2b2b2b2b2b2b2", ACCOUNT, "https://hooks.example/plain", null, "{}", null, null);
  insertAddress.run("c3c3c3c3c3c3c3c3c3c3", ACCOUNT, "https://carol@hooks.example/gone", `${PASSWORD}-deleted`, "{}", null, 2000);
  before.db
    .query("INSERT INTO custom_domains (id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, created_at) VALUES (?, ?, ?, ?, NULL, ?, ?, 0, 1000)")
    .run("d4d4d4d4d4d4d4d4", ACCOUNT, "a1a1a1a1a1a1a1a1a1a1", "mail.customer.example", "https://dave@hooks.example/domain", DOMAIN_PASSWORD);
  before.close();
  expect(databaseBytes(dir).includes(PASSWORD)).toBe(true);

  const after = openStore(dir);
  const bytes = databaseBytes(dir);
  expect([PASSWORD, S3_SECRET, SIGNING, DOMAIN_PASSWORD, `${PASSWORD}-deleted`].filter((secret) => bytes.includes(secret))).toEqual([]);
  const raw = after.db.query("SELECT target_password, attachments_json, signing_secret FROM addresses WHERE id = 'a1a1a1a1a1a1a1a1a1a1'").get() as { target_password: string; attachments_json: string; signing_secret: string };
  expect(raw.target_password).toStartWith("v1:");
  expect(raw.signing_secret).toStartWith("v1:");
  expect(JSON.parse(raw.attachments_json).secret_access_key).toStartWith("v1:");

  const addresses = createAddressRepo(after);
  const a = await addresses.get(ACCOUNT, "a1a1a1a1a1a1a1a1a1a1");
  expect(a).toMatchObject({ target: { url: "https://bob@hooks.example/in", password: PASSWORD }, attachments: s3, signingSecret: SIGNING });
  expect(await addresses.findLive("b2b2b2b2b2b2b2b2b2b2")).toMatchObject({ target: { url: "https://hooks.example/plain", password: null }, attachments: {}, signingSecret: null });
  const domain = await createCustomDomainRepo(after).findLiveByDomain("mail.customer.example");
  expect(domain?.domainTarget).toEqual({ url: "https://dave@hooks.example/domain", password: DOMAIN_PASSWORD });

  // Opening again does not encrypt twice.
  after.close();
  const again = openStore(dir);
  expect((await createAddressRepo(again).get(ACCOUNT, "a1a1a1a1a1a1a1a1a1a1"))?.target.password).toBe(PASSWORD);
  again.close();
});

test("a database without secrets migrates without making a key", () => {
  const dir = newDir();
  openStore(dir, MIGRATIONS.filter((m) => m.version < 10)).close();
  openStore(dir).close();
  expect(existsSync(`${dir}/keys/secrets.key`)).toBe(false);
});
