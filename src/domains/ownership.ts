// Domains belong to their owner (docs/security.md): whether an account may take a domain as
// a custom domain (mail to it goes to the account) or as a sending domain, given who else
// holds it; and the DNS TXT proof with which the real owner takes a domain back from
// another account. Pure: the API glue (src/api/domain-claims.ts) looks the holders up,
// asks DNS and moves the domain.
import { createHmac } from "node:crypto";
import { isSameOrSubdomain } from "../lib/domain-name.ts";

export type DomainUse = "custom_domain" | "sending_domain";

/** A live record of some account that holds `domain` (as stored: lowercase, no final dot). */
export interface DomainHolding {
  kind: DomainUse;
  accountId: string;
  domain: string;
}

/** This server's own names, as configured (compared without case or final dot). */
export interface ServerNames {
  inboundDomain: string;
  bounceHost: string;
  hostname: string;
}

/** Another account's records in the way, taken back by proof of `heldDomain`. */
export interface Conflict {
  reason: string;
  heldDomain: string;
  holders: DomainHolding[];
}

export type ClaimDecision =
  | { kind: "allowed" }
  /** This server's own name: never claimable, whatever DNS says. */
  | { kind: "server_domain"; reason: string }
  | { kind: "held"; conflicts: Conflict[] };

/** The prefix of the return-path host of a sending domain (checker.ts: mta.<domain>). */
export const RETURN_PATH_PREFIX = "mta.";

const bare = (name: string): string => name.trim().toLowerCase().replace(/\.$/, "");

/**
 * The sending domains whose mail may have `domain` as its return-path host: mail from a
 * sending domain, or from a name under it, has its envelope sender at mta.<from domain>
 * (docs/sending.md), so mta.news.shop.example serves shop.example too. Nearest first.
 */
export function returnPathOwners(domain: string): string[] {
  if (!domain.startsWith(RETURN_PATH_PREFIX)) return [];
  const labels = domain.slice(RETURN_PATH_PREFIX.length).split(".");
  const names: string[] = [];
  for (let i = 0; i + 2 <= labels.length; i++) names.push(labels.slice(i).join("."));
  return names;
}

/**
 * Whether `claimantId` may take `domain` (already normalised) for `use`. A custom domain
 * routes mail, so it must not be this server's own names (inbound domain, bounce host,
 * hostname, or a name under one), nor another account's sending domain, its return-path
 * host, or its custom domain. A sending domain must not be another account's custom domain.
 * An account's own records never stand in its way (one domain for receiving and sending).
 */
export function decideDomainClaim(input: {
  domain: string;
  use: DomainUse;
  claimantId: string;
  holdings: readonly DomainHolding[];
  server: ServerNames;
}): ClaimDecision {
  const { domain, use, claimantId, server } = input;
  if (use === "custom_domain") {
    const own: [string, string][] = [
      [server.inboundDomain, "the inbound domain"],
      [server.bounceHost, "the bounce host"],
      [server.hostname, "its hostname"],
    ];
    for (const [name, what] of own) {
      if (name.trim() !== "" && isSameOrSubdomain(domain, bare(name))) {
        return {
          kind: "server_domain",
          reason: `${domain} is this server's own domain (${domain === bare(name) ? what : `under ${what} ${bare(name)}`}); mail to it is the server's, so no account can have it. Use a domain of your own`,
        };
      }
    }
  }
  const others = input.holdings.filter((h) => h.accountId !== claimantId);
  const conflicts: Conflict[] = [];
  const add = (heldDomain: string, kind: DomainUse, reason: string) => {
    const holders = others.filter((h) => h.domain === heldDomain && h.kind === kind);
    if (holders.length === 0) return;
    const same = conflicts.find((c) => c.heldDomain === heldDomain);
    if (same) same.holders.push(...holders);
    else conflicts.push({ reason, heldDomain, holders });
  };
  add(domain, "custom_domain", `${domain} is a custom domain of another account`);
  if (use === "custom_domain") {
    add(domain, "sending_domain", `${domain} is a sending domain of another account`);
    for (const base of returnPathOwners(domain)) {
      add(base, "sending_domain", `${domain} is the return-path host of a sending domain of another account (${base})`);
    }
  }
  return conflicts.length === 0 ? { kind: "allowed" } : { kind: "held", conflicts };
}

/** Where the proof goes, and what its value starts with. */
export const PROOF_LABEL = "_postroom-verify";
export const PROOF_PREFIX = "postroom-verify=";
const TOKEN_CONTEXT = "postroom domain claim v1";

export interface ProofRecord {
  type: "TXT";
  host: string;
  value: string;
}

/**
 * The TXT record by which `accountId` proves it controls `domain`: a keyed hash of the two
 * (so it is stable, differs per account, and says nothing about the account to whoever
 * reads DNS), under a key every node shares.
 */
export function proofRecord(key: Buffer, accountId: string, domain: string): ProofRecord {
  const token = createHmac("sha256", key).update(`${TOKEN_CONTEXT}\0${accountId}\0${domain}`).digest("hex").slice(0, 32);
  return { type: "TXT", host: `${PROOF_LABEL}.${domain}`, value: `${PROOF_PREFIX}${token}` };
}

/** Whether one of the TXT records (each a list of character-strings) is exactly the proof. */
export const proofPublished = (txt: readonly (readonly string[])[], proof: ProofRecord): boolean =>
  txt.some((strings) => strings.join("").trim() === proof.value);
