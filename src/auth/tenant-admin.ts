// What the operator API does to accounts (API.md section 10), apart from HTTP: mints IDs
// and secrets, keeps only the secrets' hashes, writes each change with its audit entry in
// one transaction (tenants.repo.ts), then reloads this node's registry before answering,
// so the change holds here at once (and on the other nodes within a second, tenant-sync.ts).
// Whether an account may be changed at all (a config account may not) is decided here too.
import { newId16 } from "../lib/ids.ts";
import type { AccountRegistry } from "./accounts.ts";
import type { AuditAction, AuditEntry } from "./audit.port.ts";
import { hashSecret, mintSecret } from "./secrets.ts";
import type { TenantSync } from "./tenant-sync.ts";
import type {
  AddKeyResult,
  StoredAccount,
  StoredAccountFields,
  StoredKey,
  StoredOutbound,
  StoredToken,
  TenantRepo,
} from "./tenants.port.ts";

export interface TenantAdminDeps {
  repo: TenantRepo;
  registry: AccountRegistry;
  sync: Pick<TenantSync, "refresh">;
  nowMs(): number;
}

/** Who acts (operator.tokenLabel) on which account: every change is recorded under it. */
export interface Actor {
  operator: string;
}

/** Where an account to change stands: stored and live, from the config (immutable), or unknown. */
export type Changeable = { kind: "stored"; account: StoredAccount } | { kind: "config" } | { kind: "unknown" };

export interface NewOutbound {
  name: string;
  sendRateLimit: string;
  ipPool: string | null;
  testMode: boolean;
}

/** How many fresh IDs are tried before giving up: 64 random bits collide with nothing in practice. */
const ID_ATTEMPTS = 5;

export class TenantAdmin {
  private seq = 0;

  constructor(private readonly deps: TenantAdminDeps) {}

  /** Every stored account not deleted, read from the store (so last_used_at is current). */
  all(): Promise<StoredAccount[]> {
    return this.deps.repo.loadAll();
  }

  /** The account `id` as the operator API may change it. */
  async changeable(id: string): Promise<Changeable> {
    if (this.deps.registry.source(id) === "config") return { kind: "config" };
    const account = await this.deps.repo.get(id);
    return account ? { kind: "stored", account } : { kind: "unknown" };
  }

  async createAccount(actor: Actor, fields: StoredAccountFields): Promise<StoredAccount> {
    const nowMs = this.deps.nowMs();
    const account: StoredAccount = {
      id: await this.freshId(),
      ...fields,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
      tokens: [],
      outbound: [],
    };
    await this.deps.repo.createAccount(account, this.entry(actor, "account.create", account.id, { name: fields.name }));
    await this.deps.sync.refresh();
    return account;
  }

  async updateAccount(actor: Actor, before: StoredAccount, fields: StoredAccountFields): Promise<StoredAccount | null> {
    const changed = Object.fromEntries(
      (Object.keys(fields) as (keyof StoredAccountFields)[]).filter((k) => fields[k] !== before[k]).map((k) => [k, fields[k]]),
    );
    const ok = await this.deps.repo.updateAccount(
      before.id,
      fields,
      this.deps.nowMs(),
      this.entry(actor, "account.update", before.id, changed),
    );
    await this.deps.sync.refresh();
    return ok ? this.deps.repo.get(before.id) : null;
  }

  async deleteAccount(actor: Actor, id: string): Promise<boolean> {
    const ok = await this.deps.repo.deleteAccount(id, this.deps.nowMs(), this.entry(actor, "account.delete", id, {}));
    await this.deps.sync.refresh();
    return ok;
  }

  /** A new API token; the secret is in the answer only. Null when the account is gone. */
  async mintToken(
    actor: Actor,
    accountId: string,
    name: string,
    readOnly: boolean,
  ): Promise<{ token: StoredToken; secret: string } | null> {
    const secret = mintSecret();
    const token: StoredToken = {
      id: newId16(),
      accountId,
      name,
      tokenHash: hashSecret(secret),
      readOnly,
      createdAtMs: this.deps.nowMs(),
      lastUsedAtMs: null,
    };
    const scopes = readOnly ? ["read"] : ["read", "write"];
    const ok = await this.deps.repo.addToken(token, this.entry(actor, "api_token.create", accountId, { token_id: token.id, name, scopes }));
    await this.deps.sync.refresh();
    return ok ? { token, secret } : null;
  }

  async revokeToken(actor: Actor, accountId: string, tokenId: string): Promise<boolean> {
    const ok = await this.deps.repo.removeToken(
      accountId,
      tokenId,
      this.entry(actor, "api_token.revoke", accountId, { token_id: tokenId }),
    );
    await this.deps.sync.refresh();
    return ok;
  }

  /** A new outbound account with its first key; the secret is in the answer only. Null when the account is gone. */
  async createOutbound(actor: Actor, accountId: string, input: NewOutbound): Promise<{ outbound: StoredOutbound; secret: string } | null> {
    const id = await this.freshId();
    const { key, secret } = this.newKey(id);
    const outbound: StoredOutbound = { id, accountId, ...input, createdAtMs: key.createdAtMs, keys: [key] };
    const details = { outbound_account_id: id, key_id: key.id, name: input.name, ip_pool: input.ipPool };
    const ok = await this.deps.repo.addOutbound(outbound, this.entry(actor, "outbound_account.create", accountId, details));
    await this.deps.sync.refresh();
    return ok ? { outbound, secret } : null;
  }

  async addKey(actor: Actor, accountId: string, outboundId: string): Promise<{ result: AddKeyResult; key: StoredKey; secret: string }> {
    const { key, secret } = this.newKey(outboundId);
    const details = { outbound_account_id: outboundId, key_id: key.id };
    const result = await this.deps.repo.addKey(accountId, key, this.entry(actor, "outbound_key.create", accountId, details));
    await this.deps.sync.refresh();
    return { result, key, secret };
  }

  async revokeKey(actor: Actor, accountId: string, outboundId: string, keyId: string): Promise<boolean> {
    const details = { outbound_account_id: outboundId, key_id: keyId };
    const ok = await this.deps.repo.removeKey(accountId, outboundId, keyId, this.entry(actor, "outbound_key.revoke", accountId, details));
    await this.deps.sync.refresh();
    return ok;
  }

  private newKey(outboundAccountId: string): { key: StoredKey; secret: string } {
    const secret = mintSecret();
    return { key: { id: newId16(), outboundAccountId, keyHash: hashSecret(secret), createdAtMs: this.deps.nowMs() }, secret };
  }

  /** An ID no account or outbound account has or had, in the config or the store. */
  private async freshId(): Promise<string> {
    for (let i = 0; i < ID_ATTEMPTS; i++) {
      const id = newId16();
      const { registry, repo } = this.deps;
      if (!registry.account(id) && !registry.outbound(id) && !(await repo.idTaken(id))) return id;
    }
    throw new Error("no free account ID found");
  }

  private entry(actor: Actor, action: AuditAction, target: string, details: Record<string, unknown>): AuditEntry {
    const createdAtMs = this.deps.nowMs();
    // Ordered within one millisecond on this node (the list's tie-break is the ID), unique across nodes.
    this.seq = (this.seq + 1) % 0x10000;
    const id = createdAtMs.toString(16).padStart(12, "0") + this.seq.toString(16).padStart(4, "0") + newId16().slice(0, 8);
    return { id, createdAtMs, operator: actor.operator, action, target, details };
  }
}
