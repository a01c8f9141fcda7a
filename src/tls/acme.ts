// One ACME order (RFC 8555) with acme-client: account key kept in the store, CAA
// checked first (only a definite answer that forbids our CA stops the order), HTTP-01
// answered by our responder, a fresh certificate key per order.
import type * as AcmeClient from "acme-client";
import { readFileSync } from "node:fs";
import { Agent } from "node:https";
import type { DnsResolver } from "../lib/dns.ts";
import type { Logger } from "../lib/logger.ts";
import { checkCaa } from "./caa.ts";
import type { TlsMaterial } from "./certificate.ts";
import type { ChallengeResponder } from "./challenges.ts";
import type { TlsStore } from "./tls-store.port.ts";

export interface AcmeSettings {
  directoryUrl: string;
  email: string;
  domains: string[];
  caFile: string;
  keyType: "rsa" | "ecdsa";
}

export interface AcmeDeps {
  store: TlsStore;
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
  const known = await deps.store.account();
  const knownUrl = known?.directoryUrl === settings.directoryUrl ? known.accountUrl : null;
  const client = new acme.Client({
    directoryUrl: settings.directoryUrl,
    accountKey: await accountKey(acme, deps.store),
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
      await deps.responder.set(challenge.token, keyAuthorization);
    },
    challengeRemoveFn: async (_authz, challenge) => {
      await deps.responder.delete(challenge.token);
    },
  });
  if (!knownUrl) await deps.store.saveAccount({ directoryUrl: settings.directoryUrl, accountUrl: client.getAccountUrl() });
  return { key: certKey.toString(), cert };
}

function readCaFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new AcmeError(`tls.acme.ca_file ${path} cannot be read: ${(err as Error).message}`);
  }
}

/**
 * The ACME account key, made once and kept: a new key each time would be a new account.
 * Two nodes making one at once keep the first stored, and both use that one.
 */
async function accountKey(acme: typeof AcmeClient, store: TlsStore): Promise<Buffer> {
  const kept = await store.accountKey();
  if (kept !== null) return Buffer.from(kept);
  return Buffer.from(await store.keepAccountKey((await acme.crypto.createPrivateEcdsaKey()).toString()));
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
