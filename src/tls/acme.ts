// One ACME order (RFC 8555) with acme-client: account key kept under data_dir, CAA
// checked first (only a definite answer that forbids our CA stops the order), HTTP-01
// answered by our responder, a fresh certificate key per order.
import type * as AcmeClient from "acme-client";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { Agent } from "node:https";
import { join } from "node:path";
import type { DnsResolver } from "../lib/dns.ts";
import { writeFileDurably } from "../lib/durable-file.ts";
import type { Logger } from "../lib/logger.ts";
import { checkCaa } from "./caa.ts";
import type { TlsMaterial } from "./certificate.ts";
import type { ChallengeResponder } from "./challenges.ts";

export interface AcmeSettings {
  directoryUrl: string;
  email: string;
  domains: string[];
  caFile: string;
  keyType: "rsa" | "ecdsa";
}

export interface AcmeDeps {
  tlsDir: string;
  responder: ChallengeResponder;
  resolver: DnsResolver;
  logger: Logger;
}

/** An order that failed for a reason worth a sentence (CAA, unreadable CA file, CA refusal). */
export class AcmeError extends Error {}

// acme-client (axios, @peculiar/x509, node-forge) takes over 100 ms to load: loaded on the
// first order, not at every start of a process that may never order.
const loadAcme = async (): Promise<typeof AcmeClient> => ((await import("acme-client")) as { default: typeof AcmeClient }).default;

export async function orderCertificate(settings: AcmeSettings, deps: AcmeDeps): Promise<TlsMaterial> {
  const acme = await loadAcme();
  // acme-client talks through one shared axios instance; a private CA (Pebble, an internal
  // step-ca) is trusted for it alone, never process-wide.
  acme.axios.defaults.httpsAgent = settings.caFile ? new Agent({ ca: readCaFile(settings.caFile) }) : undefined;
  const knownUrl = accountUrl(deps.tlsDir, settings.directoryUrl);
  const client = new acme.Client({
    directoryUrl: settings.directoryUrl,
    accountKey: await accountKey(acme, deps.tlsDir),
    ...(knownUrl ? { accountUrl: knownUrl } : {}),
    backoffAttempts: 8,
  });
  const caIdentities = await directoryCaaIdentities(acme, settings.directoryUrl);
  const caa = await checkCaa(deps.resolver, settings.domains, caIdentities);
  if (caa.refusal) throw new AcmeError(caa.refusal);
  for (const reason of caa.warnings) deps.logger.warn("caa lookup failed", { domains: settings.domains, reason });

  const certKey = settings.keyType === "ecdsa" ? await acme.crypto.createPrivateEcdsaKey() : await acme.crypto.createPrivateRsaKey(2048);
  const [, csr] = await acme.crypto.createCsr({ commonName: settings.domains[0], altNames: settings.domains }, certKey);
  const cert = await client.auto({
    csr,
    email: settings.email || undefined,
    termsOfServiceAgreed: true,
    challengePriority: ["http-01"],
    // The CA checks the challenge itself; acme-client's own pre-check would fetch our
    // public name from this host, which a NAT or a test setup cannot reach.
    skipChallengeVerification: true,
    challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
      if (challenge.type !== "http-01") throw new AcmeError(`challenge type ${challenge.type} is not supported; only http-01`);
      deps.responder.set(challenge.token, keyAuthorization);
    },
    challengeRemoveFn: async (_authz, challenge) => {
      deps.responder.delete(challenge.token);
    },
  });
  if (!knownUrl) saveAccountUrl(deps.tlsDir, settings.directoryUrl, client.getAccountUrl());
  return { key: certKey.toString(), cert };
}

// The account's URL, kept per directory: with it the next order skips registration
// (re-registering an existing account turns into an empty update some CAs refuse).
const accountFile = (tlsDir: string) => join(tlsDir, "acme-account.json");

function accountUrl(tlsDir: string, directoryUrl: string): string | null {
  try {
    const saved = JSON.parse(readFileSync(accountFile(tlsDir), "utf8")) as { directoryUrl?: string; accountUrl?: string };
    return saved.directoryUrl === directoryUrl && typeof saved.accountUrl === "string" ? saved.accountUrl : null;
  } catch {
    return null;
  }
}

function saveAccountUrl(tlsDir: string, directoryUrl: string, url: string): void {
  writeFileDurably(accountFile(tlsDir), JSON.stringify({ directoryUrl, accountUrl: url }));
}

function readCaFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new AcmeError(`tls.acme.ca_file ${path} cannot be read: ${(err as Error).message}`);
  }
}

/** The ACME account key, made once and kept: a new key each time would be a new account. */
async function accountKey(acme: typeof AcmeClient, tlsDir: string): Promise<Buffer> {
  const path = join(tlsDir, "acme-account.key");
  if (existsSync(path)) return readFileSync(path);
  mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
  const key = await acme.crypto.createPrivateEcdsaKey();
  writeFileDurably(path, key);
  return key;
}

/**
 * The directory's meta.caaIdentities (RFC 8555 7.1.1), which acme-client reads but does not
 * give out: the directory is read once more through its axios instance (the same CA trust).
 */
async function directoryCaaIdentities(acme: typeof AcmeClient, directoryUrl: string): Promise<string[]> {
  const { data } = await acme.axios.get<{ meta?: { caaIdentities?: unknown } }>(directoryUrl);
  const ids = data?.meta?.caaIdentities;
  return Array.isArray(ids) ? ids.filter((d): d is string => typeof d === "string") : [];
}
