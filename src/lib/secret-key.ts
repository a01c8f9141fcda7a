// Keys the appliance makes for itself (URL signing, encryption at rest), kept under
// data_dir/keys, created on first use with 0600 permissions, never logged.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const KEY_BYTES = 32;

export function loadOrCreateKey(dataDir: string, name: string): Buffer {
  const dir = join(dataDir, "keys");
  const path = join(dir, `${name}.key`);
  if (existsSync(path)) {
    const key = readFileSync(path);
    if (key.length !== KEY_BYTES) throw new Error(`${path} is not a ${KEY_BYTES}-byte key; remove it to make a new one`);
    // A directory or key made by hand (or restored) under a looser umask: the owner's only.
    ownerOnly(dir, 0o700);
    ownerOnly(path, 0o600);
    return key;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  ownerOnly(dir, 0o700);
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, key, { mode: 0o600, flush: true });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
  return key;
}

/** Tightens the mode of a file of ours; one owned by another user (EPERM) is left as it is. */
function ownerOnly(path: string, mode: number): void {
  if ((statSync(path).mode & 0o777) === mode) return;
  try {
    chmodSync(path, mode);
  } catch (err) {
    if ((err as { code?: string }).code !== "EPERM") throw err;
  }
}
