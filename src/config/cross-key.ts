// The rules of the config file that the schema cannot express because they tie several
// keys together: IDs and secrets used once, what a TLS mode needs, leases, listeners.
import { parseIpRange } from "../lib/ip-ranges.ts";
import type { Problem } from "../lib/validation.ts";
import { ipPoolProblems } from "./ip-pool-problems.ts";
import type { RawConfig } from "./schema.ts";
import { destinationProblems } from "./destinations.ts";
import { tlsRequiredKeyProblems } from "./tls-required.ts";
import { parseDurationMs } from "./units.ts";

/** Rules the schema cannot express because they tie several keys together. */
export function crossKeyProblems(raw: RawConfig): Problem[] {
  const problems: Problem[] = [];
  const owners = new Map<string, string>();
  const secretOwners = new Map<string, string>();
  const claimId = (id: string, path: string) => {
    const prior = owners.get(id);
    if (prior) problems.push({ path, message: `duplicates the ID at ${prior}` });
    else owners.set(id, path);
  };
  const claimSecret = (hash: string, path: string) => {
    const prior = secretOwners.get(hash);
    if (prior) problems.push({ path, message: `the same secret is already used at ${prior}; mint one per use with \`postroom secret\`` });
    else secretOwners.set(hash, path);
  };
  raw.accounts.forEach((a, i) => {
    claimId(a.id, `accounts[${i}].id`);
    for (const [j, h] of a.api_tokens.entries()) claimSecret(h, `accounts[${i}].api_tokens[${j}]`);
    a.outbound.forEach((o, k) => {
      claimId(o.id, `accounts[${i}].outbound[${k}].id`);
      for (const [j, h] of o.api_keys.entries()) claimSecret(h, `accounts[${i}].outbound[${k}].api_keys[${j}]`);
    });
  });
  for (const [j, h] of raw.dashboard.admin_tokens.entries()) claimSecret(h, `dashboard.admin_tokens[${j}]`);
  problems.push(...tlsRequiredKeyProblems(raw.tls));
  problems.push(...destinationProblems(raw.outbound.destinations));
  if (raw.smtp.submission_tls_listen !== "" && raw.tls.mode === "off") {
    problems.push({
      path: "smtp.submission_tls_listen",
      message: 'needs a certificate: set tls.mode to "files" or "acme", or leave it ""',
    });
  }
  if (raw.http.tls && raw.tls.mode === "off") {
    problems.push({ path: "http.tls", message: 'needs a certificate: set tls.mode to "files" or "acme", or set http.tls = false' });
  }
  // A lease is renewed every third of its time: shorter than a second, a renewal would be
  // due more often than a store round trip and an ordinary pause (GC, a busy event loop)
  // could lose it. No upper bound and no tie to a timeout: the heartbeat keeps a lease for
  // as long as the work takes (webhooks.lease_time had to outlast webhooks.timeout before).
  for (const [path, value] of [
    ["outbound.lease_time", raw.outbound.lease_time],
    ["webhooks.lease_time", raw.webhooks.lease_time],
    ["cluster.job_lease_time", raw.cluster.job_lease_time],
  ] as const) {
    if (ms(value) < MIN_LEASE_MS)
      problems.push({ path, message: `must be at least 1s, not "${value}": the node renews its leases every third of it` });
  }
  raw.http.trusted_proxies.forEach((entry, i) => {
    if (!parseIpRange(entry)) {
      problems.push({
        path: `http.trusted_proxies[${i}]`,
        message: `${JSON.stringify(entry)} is not an IP address or CIDR range (such as "127.0.0.1", "10.0.0.0/8" or "fd00::/8")`,
      });
    }
  });
  problems.push(...ipPoolProblems(raw));
  if (raw.http.listen === "") problems.push({ path: "http.listen", message: "is required: the API and /healthz live there" });
  return problems;
}

/** The shortest lease_time (outbound, webhooks, cluster.job_lease_time). */
const MIN_LEASE_MS = 1000;

// The schema's pattern already accepted the string, so the parser cannot fail here.
const ms = (s: string): number => parseDurationMs(s)!;
