// Nodes sharing one PostgreSQL must hold the same data_dir/keys: a DKIM key or target
// password one node encrypted is unreadable under another secrets/dkim key, and a signed
// URL or tracking link one node made fails on a node with another url-signing/tracking
// key. The keys stay out of the database (a leaked dump must not decrypt the secrets in
// it); the database keeps only a fingerprint of each, an HMAC under the key, which says
// nothing about the key. The first node to start records them; every node compares its
// own with them at start and refuses to run with a different key.
import { createHmac } from "node:crypto";
import type { SQL } from "bun";
import { loadOrCreateKey } from "../lib/secret-key.ts";
import { SECRETS_KEY } from "./store.ts";

/** The keys under data_dir/keys that every node must share (file name: NAME.key). */
export const SHARED_KEY_NAMES = ["url-signing", "dkim", "tracking", SECRETS_KEY] as const;

const FINGERPRINT_LABEL = "postroom key fingerprint v1";

/** HMAC-SHA256 of a fixed label under the key, hex: equal for equal keys, and no help in finding the key. */
export const keyFingerprint = (key: Buffer): string => createHmac("sha256", key).update(FINGERPRINT_LABEL).digest("hex");

/** This node's shared keys, each made now if it is missing (then it differs from the first node's, and checkSharedKeys says so). */
export function loadSharedKeys(dataDir: string): Record<string, Buffer> {
  return Object.fromEntries(SHARED_KEY_NAMES.map((name) => [name, loadOrCreateKey(dataDir, name)]));
}

/** The names whose recorded fingerprint differs from ours, in our order. */
function mismatchedKeys(recorded: ReadonlyMap<string, string>, ours: Record<string, string>): string[] {
  return Object.entries(ours)
    .filter(([name, fingerprint]) => recorded.get(name) !== fingerprint)
    .map(([name]) => name);
}

/**
 * Records each key's fingerprint if no node did yet, then compares ours with what is
 * recorded; throws when a key differs, naming its file. Two nodes starting at once agree
 * on the first insert (ON CONFLICT DO NOTHING) and the other one fails.
 */
export async function checkSharedKeys(sql: SQL, keys: Record<string, Buffer>, nowMs = Date.now()): Promise<void> {
  const ours = Object.fromEntries(Object.entries(keys).map(([name, key]) => [name, keyFingerprint(key)]));
  const names = Object.keys(ours);
  if (names.length === 0) return;
  const rows = names.map((name) => ({ name, fingerprint: ours[name]!, created_at: nowMs }));
  await sql`INSERT INTO key_fingerprints ${sql(rows, "name", "fingerprint", "created_at")} ON CONFLICT (name) DO NOTHING`;
  const recorded: { name: string; fingerprint: string }[] =
    await sql`SELECT name, fingerprint FROM key_fingerprints WHERE name IN ${sql(names)}`;
  const differ = mismatchedKeys(new Map(recorded.map((r) => [r.name, r.fingerprint])), ours);
  if (differ.length === 0) return;
  const files = differ.map((name) => `data_dir/keys/${name}.key`).join(", ");
  throw new Error(
    `This node's ${files} ${differ.length === 1 ? "is not the key" : "are not the keys"} the first node on this database recorded, so it could not read what the others encrypted or signed: copy data_dir/keys from the first node to this node's data_dir and start it again.`,
  );
}
