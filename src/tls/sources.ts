// Where the current certificate lives: the operator's files (mode "files") or the one
// ACME gave us, kept under data_dir/tls as one PEM file (key, then chain) so key and
// certificate are replaced together by one rename.
import { mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/config.ts";
import { writeFileDurably } from "../lib/durable-file.ts";
import { pairProblem, type TlsMaterial } from "./certificate.ts";

export const tlsDir = (dataDir: string): string => join(dataDir, "tls");
const acmeFile = (dataDir: string): string => join(tlsDir(dataDir), "certificate.pem");

/** An ACME order that failed, kept on disk until one succeeds. */
export interface OrderFailure {
  atMs: number;
  reason: string;
  retryAtMs: number;
}

export type Loaded = ({ material: TlsMaterial; problem: null } | { material: null; problem: string }) & {
  /** ACME mode: the last order, when it failed. */
  orderFailure?: OrderFailure;
};

/** The certificate the config points at right now, checked, or why there is none. */
export function loadConfigured(config: Config, nowMs: number): Loaded {
  if (config.tls.mode === "files") return checked(readFiles(config.tls.certFile, config.tls.keyFile), nowMs);
  if (config.tls.mode === "acme") {
    const loaded = checked(readAcmeFile(config.dataDir), nowMs);
    const orderFailure = readOrderFailure(config.dataDir);
    return orderFailure ? { ...loaded, orderFailure } : loaded;
  }
  return { material: null, problem: 'tls.mode is "off"' };
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

function readAcmeFile(dataDir: string): Loaded {
  let pem: string;
  try {
    pem = readFileSync(acmeFile(dataDir), "utf8");
  } catch {
    return { material: null, problem: "no certificate obtained yet" };
  }
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(pem)?.[0];
  if (!key) return { material: null, problem: `${acmeFile(dataDir)} holds no private key` };
  return { material: { key, cert: pem.replace(key, "").trim() + "\n" }, problem: null };
}

export function saveAcmeMaterial(dataDir: string, material: TlsMaterial): void {
  writeFileDurably(acmeFile(dataDir), `${material.key.trim()}\n${material.cert.trim()}\n`);
}

// The last failed order is kept on disk because `postroom tls status` runs in another
// process than the server that ordered, and "no certificate yet" alone does not say why.
const orderFailureFile = (dataDir: string): string => join(tlsDir(dataDir), "last-order-failure.json");

/** Keeps `failure` as the last order's outcome; null (a success) removes it. */
export function saveOrderFailure(dataDir: string, failure: OrderFailure | null): void {
  if (failure === null) {
    rmSync(orderFailureFile(dataDir), { force: true });
    return;
  }
  mkdirSync(tlsDir(dataDir), { recursive: true, mode: 0o700 });
  writeFileDurably(orderFailureFile(dataDir), JSON.stringify(failure));
}

function readOrderFailure(dataDir: string): OrderFailure | null {
  try {
    const f = JSON.parse(readFileSync(orderFailureFile(dataDir), "utf8")) as Partial<OrderFailure>;
    return typeof f.atMs === "number" && typeof f.reason === "string" && typeof f.retryAtMs === "number" ? { atMs: f.atMs, reason: f.reason, retryAtMs: f.retryAtMs } : null;
  } catch {
    return null;
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
