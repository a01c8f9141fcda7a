// Where the current certificate lives: the operator's files (mode "files") or the one
// ACME gave us, kept in the store (tls-store.port.ts) with its key, so key and
// certificate are replaced together and every node on one database serves the same pair.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/config.ts";
import { pairProblem, type TlsMaterial } from "./certificate.ts";
import type { OrderFailure, TlsStore } from "./tls-store.port.ts";

export type { OrderFailure } from "./tls-store.port.ts";

/** Where versions before the store kept ACME's files; read once at start to import them. */
export const tlsDir = (dataDir: string): string => join(dataDir, "tls");

export type Loaded = ({ material: TlsMaterial; problem: null } | { material: null; problem: string }) & {
  /** ACME mode: the last order, when it failed. */
  orderFailure?: OrderFailure;
};

/** The certificate the config points at right now, checked, or why there is none. `store` is asked for in ACME mode only. */
export async function loadConfigured(config: Config, store: () => TlsStore, nowMs: number): Promise<Loaded> {
  if (config.tls.mode === "files") return checked(readFiles(config.tls.certFile, config.tls.keyFile), nowMs);
  if (config.tls.mode === "acme") {
    const loaded = checked(await storedCertificate(store()), nowMs);
    const orderFailure = await store().orderFailure();
    return orderFailure ? { ...loaded, orderFailure } : loaded;
  }
  return { material: null, problem: 'tls.mode is "off"' };
}

async function storedCertificate(store: TlsStore): Promise<Loaded> {
  try {
    const material = await store.certificate();
    return material ? { material, problem: null } : { material: null, problem: "no certificate obtained yet" };
  } catch (err) {
    // A key that cannot be opened (data_dir/keys/secrets.key replaced or lost): a new order
    // replaces it, instead of a start that fails.
    return { material: null, problem: `the stored certificate cannot be read: ${(err as Error).message}` };
  }
}

function checked(read: Loaded, nowMs: number): Loaded {
  if (!read.material) return read;
  const problem = pairProblem(read.material, nowMs);
  return problem ? { material: null, problem } : read;
}

function readFiles(certFile: string, keyFile: string): Loaded {
  const cert = readText(certFile, "tls.cert_file");
  if (typeof cert !== "string") return cert;
  const key = readText(keyFile, "tls.key_file");
  if (typeof key !== "string") return key;
  return { material: { key, cert }, problem: null };
}

function readText(path: string, key: string): string | Loaded {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    return { material: null, problem: `${key} ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}

/** A fingerprint of the configured files (size and mtime of each), to notice a replacement. */
export function filesStamp(config: Config): string {
  return [config.tls.certFile, config.tls.keyFile]
    .map((path) => {
      try {
        const s = statSync(path);
        return `${s.size}:${s.mtimeMs}:${s.ino}`;
      } catch {
        return "missing";
      }
    })
    .join("|");
}
