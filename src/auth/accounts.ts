// The accounts declared in the config, looked up by ID or by credential. Replaced as a
// whole on SIGHUP, so a request sees either the old set or the new one, never a mix.
import type { AccountConfig, Config, OutboundAccountConfig } from "../config/config.ts";
import { secretMatchesAny } from "./secrets.ts";

export type Principal =
  | { kind: "account"; account: AccountConfig }
  | { kind: "outbound"; account: AccountConfig; outbound: OutboundAccountConfig };

export class AccountRegistry {
  private accounts = new Map<string, AccountConfig>();
  private outbounds = new Map<string, { account: AccountConfig; outbound: OutboundAccountConfig }>();

  constructor(accounts: readonly AccountConfig[]) {
    this.replace(accounts);
  }

  static fromConfig(config: Config): AccountRegistry {
    return new AccountRegistry(config.accounts);
  }

  replace(accounts: readonly AccountConfig[]): void {
    const byId = new Map<string, AccountConfig>();
    const outById = new Map<string, { account: AccountConfig; outbound: OutboundAccountConfig }>();
    for (const a of accounts) {
      byId.set(a.id, a);
      for (const o of a.outbound) outById.set(o.id, { account: a, outbound: o });
    }
    this.accounts = byId;
    this.outbounds = outById;
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

  /** The owner of a secret presented without a name (Bearer): any account or outbound account. */
  principalForSecret(secret: string): Principal | null {
    let found: Principal | null = null;
    // No early exit: the time taken does not depend on which entry matched.
    for (const account of this.accounts.values()) {
      if (secretMatchesAny(secret, account.apiTokenHashes)) found ??= { kind: "account", account };
      for (const outbound of account.outbound) {
        if (secretMatchesAny(secret, outbound.apiKeyHashes)) found ??= { kind: "outbound", account, outbound };
      }
    }
    return found;
  }

  /** The owner of a secret presented with a name (Basic, SMTP AUTH): that ID's own secrets only. */
  principalForNamedSecret(id: string, secret: string): Principal | null {
    const account = this.accounts.get(id);
    if (account) return secretMatchesAny(secret, account.apiTokenHashes) ? { kind: "account", account } : null;
    const out = this.outbounds.get(id);
    if (out) return secretMatchesAny(secret, out.outbound.apiKeyHashes) ? { kind: "outbound", ...out } : null;
    return null;
  }
}
