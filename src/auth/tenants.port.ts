// Accounts made through the operator API (API.md section 10), as the store keeps them: the
// account, its API tokens, its outbound accounts and their keys. Secrets are kept only as
// their SHA-256 (secrets.ts); each write records its audit entry and counts one more
// change in the same transaction, so nothing half-made is left and every node notices it
// (tenant-sync.ts). tenants.repo.ts implements this once for both engines.
import type { AuditEntry } from "./audit.port.ts";

export type TokenScope = "read" | "write";

export interface StoredToken {
  id: string;
  accountId: string;
  name: string;
  tokenHash: string;
  /** Scopes ["read"]: every write (non-GET) of the account API is refused. */
  readOnly: boolean;
  createdAtMs: number;
  lastUsedAtMs: number | null;
}

export interface StoredKey {
  id: string;
  outboundAccountId: string;
  keyHash: string;
  createdAtMs: number;
}

export interface StoredOutbound {
  id: string;
  accountId: string;
  name: string;
  /** "N/min" as the config writes it, or "off". */
  sendRateLimit: string;
  /** Stored as given; the IP pools' feature decides what it names. */
  ipPool: string | null;
  testMode: boolean;
  createdAtMs: number;
  keys: StoredKey[];
}

export interface StoredAccountFields {
  name: string;
  /** "N/min" as the config writes it, or "off". */
  rateLimit: string;
  testMode: boolean;
  markdown: boolean;
  domainTargets: boolean;
  suspended: boolean;
}

export interface StoredAccount extends StoredAccountFields {
  id: string;
  createdAtMs: number;
  updatedAtMs: number;
  tokens: StoredToken[];
  outbound: StoredOutbound[];
}

/** Most live keys an outbound account has at once: the current one and its successor (rotation). */
export const MAX_LIVE_KEYS = 2;

export type AddKeyResult = "added" | "no_such_outbound" | "too_many";

export interface TenantRepo {
  /** Counts every write: a node reloads when it has moved. */
  version(): Promise<number>;
  /** Every account not deleted, with its tokens, outbound accounts and keys. */
  loadAll(): Promise<StoredAccount[]>;
  /** One account not deleted, or null. */
  get(id: string): Promise<StoredAccount | null>;
  /** Whether the ID was ever used (deleted accounts included): a new ID must not be. */
  idTaken(id: string): Promise<boolean>;
  createAccount(account: StoredAccount, audit: AuditEntry): Promise<void>;
  /** False when the account is unknown or deleted. */
  updateAccount(id: string, fields: StoredAccountFields, nowMs: number, audit: AuditEntry): Promise<boolean>;
  /** Marks it deleted and deletes its tokens and keys; false when unknown or already deleted. */
  deleteAccount(id: string, nowMs: number, audit: AuditEntry): Promise<boolean>;
  /** False when the account is unknown or deleted (nothing is written). */
  addToken(token: StoredToken, audit: AuditEntry): Promise<boolean>;
  removeToken(accountId: string, tokenId: string, audit: AuditEntry): Promise<boolean>;
  /** False when the account is unknown or deleted (nothing is written). */
  addOutbound(outbound: StoredOutbound, audit: AuditEntry): Promise<boolean>;
  addKey(accountId: string, key: StoredKey, audit: AuditEntry): Promise<AddKeyResult>;
  removeKey(accountId: string, outboundId: string, keyId: string, audit: AuditEntry): Promise<boolean>;
  /** Records when tokens were last used (never moves a time back); not a change the nodes reload for. */
  touchTokens(used: ReadonlyMap<string, number>): Promise<void>;
}
