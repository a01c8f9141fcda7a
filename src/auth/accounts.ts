// Every account, looked up by ID or by credential: the ones the config declares and the
// ones made through the operator API (kept in the store, tenants.port.ts). Each source is
// replaced as a whole (the config on SIGHUP, the store's when tenant-sync.ts sees a change),
// so a request sees either the old set or the new one, never a mix. A config account wins
// over a stored one with the same ID.
import type { AccountConfig, Config, OutboundAccountConfig } from "../config/config.ts";
import { hashSecret, matchingHash } from "./secrets.ts";
import { storedAsConfig } from "./tenant-accounts.ts";
import type { StoredAccount } from "./tenants.port.ts";

export type Principal =
  /** `tokenId` and `readOnly`: a token made through the operator API (config tokens have neither). */
  | { kind: "account"; account: AccountConfig; tokenId?: string; readOnly?: boolean }
  | { kind: "outbound"; account: AccountConfig; outbound: OutboundAccountConfig };

export type AccountSource = "config" | "api";

/** What the registry knows of a stored token beyond its hash. */
interface TokenFacts {
  id: string;
  readOnly: boolean;
}

export class AccountRegistry {
  private configAccounts: readonly AccountConfig[] = [];
  private storedAccounts: readonly StoredAccount[] = [];
  private accounts = new Map<string, AccountConfig>();
  private outbounds = new Map<string, { account: AccountConfig; outbound: OutboundAccountConfig }>();
  private sources = new Map<string, AccountSource>();
  private suspendedIds = new Set<string>();
  private tokens = new Map<string, TokenFacts>();
  /** Every token's and key's stored hash, to its owner: one lookup, whatever the number of accounts. */
  private owners = new Map<string, Principal>();
  /** Stored tokens used since the last flush, by ID, with when (tenant-sync.ts writes them). */
  private used = new Map<string, number>();

  constructor(accounts: readonly AccountConfig[]) {
    this.replace(accounts);
  }

  static fromConfig(config: Config): AccountRegistry {
    return new AccountRegistry(config.accounts);
  }

  /** The config's accounts (a reload). */
  replace(accounts: readonly AccountConfig[]): void {
    this.configAccounts = accounts;
    this.rebuild();
  }

  /** The store's accounts (tenant-sync.ts, after a change). */
  replaceStored(accounts: readonly StoredAccount[]): void {
    this.storedAccounts = accounts;
    this.rebuild();
  }

  private rebuild(): void {
    const byId = new Map<string, AccountConfig>();
    const outById = new Map<string, { account: AccountConfig; outbound: OutboundAccountConfig }>();
    const sources = new Map<string, AccountSource>();
    const suspended = new Set<string>();
    const tokens = new Map<string, TokenFacts>();
    const add = (a: AccountConfig, source: AccountSource) => {
      byId.set(a.id, a);
      sources.set(a.id, source);
      for (const o of a.outbound) if (!outById.has(o.id)) outById.set(o.id, { account: a, outbound: o });
    };
    for (const a of this.configAccounts) add(a, "config");
    for (const s of this.storedAccounts) {
      if (byId.has(s.id)) continue;
      add(storedAsConfig(s), "api");
      if (s.suspended) suspended.add(s.id);
      for (const t of s.tokens) tokens.set(t.tokenHash, { id: t.id, readOnly: t.readOnly });
    }
    const owners = new Map<string, Principal>();
    for (const a of byId.values()) {
      for (const h of a.apiTokenHashes) if (!owners.has(h)) owners.set(h, accountPrincipal(a, tokens.get(h)));
      for (const o of a.outbound)
        for (const h of o.apiKeyHashes) if (!owners.has(h)) owners.set(h, { kind: "outbound", account: a, outbound: o });
    }
    this.owners = owners;
    this.accounts = byId;
    this.outbounds = outById;
    this.sources = sources;
    this.suspendedIds = suspended;
    this.tokens = tokens;
  }

  account(id: string): AccountConfig | undefined {
    return this.accounts.get(id);
  }

  outbound(id: string): { account: AccountConfig; outbound: OutboundAccountConfig } | undefined {
    return this.outbounds.get(id);
  }

  all(): AccountConfig[] {
    return [...this.accounts.values()];
  }

  /** Where an account was declared; undefined for an unknown one. */
  source(id: string): AccountSource | undefined {
    return this.sources.get(id);
  }

  /** A suspended account's tokens and keys get 403 and its mail is refused (API.md section 10). */
  suspended(accountId: string): boolean {
    return this.suspendedIds.has(accountId);
  }

  /** Whether the token with this stored hash may only read (scopes ["read"]). */
  readOnlyHash(tokenHash: string): boolean {
    return this.tokens.get(tokenHash)?.readOnly ?? false;
  }

  /** Notes that a stored token authenticated a call (its last_used_at). */
  tokenUsed(tokenId: string, atMs: number): void {
    this.used.set(tokenId, atMs);
  }

  /** The uses noted since the last call, forgotten here. */
  takeUses(): Map<string, number> {
    const used = this.used;
    this.used = new Map();
    return used;
  }

  /**
   * The owner of a secret presented without a name (Bearer): any account or outbound
   * account. The secret is hashed once and its hash looked up: the time taken depends on
   * the SHA-256 of what was presented, which tells an attacker nothing about any stored
   * secret (a scan comparing every hash took 82 ms a call with 10,000 accounts).
   */
  principalForSecret(secret: string): Principal | null {
    return this.owners.get(hashSecret(secret)) ?? null;
  }

  /** The owner of a secret presented with a name (Basic, SMTP AUTH): that ID's own secrets only. */
  principalForNamedSecret(id: string, secret: string): Principal | null {
    const account = this.accounts.get(id);
    if (account) {
      const hash = matchingHash(secret, account.apiTokenHashes);
      return hash === null ? null : accountPrincipal(account, this.tokens.get(hash));
    }
    const out = this.outbounds.get(id);
    if (out) return matchingHash(secret, out.outbound.apiKeyHashes) !== null ? { kind: "outbound", ...out } : null;
    return null;
  }
}

/** An account's principal for one of its tokens; `facts` for a token made through the API. */
const accountPrincipal = (account: AccountConfig, facts: TokenFacts | undefined): Principal =>
  facts ? { kind: "account", account, tokenId: facts.id, readOnly: facts.readOnly } : { kind: "account", account };
