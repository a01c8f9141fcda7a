// The port through which ACME's state is kept, whatever the engine: tls-store.repo.ts
// implements TlsStateRepo once for SQLite and PostgreSQL, and one contract test (test/tls/tls-store.contract.test.ts) runs the same cases on both.
// Kept in the store rather than under data_dir/tls so that every node on one database
// serves the same certificate and any node answers the CA's HTTP-01 request. TlsStore is
// what the rest of src/tls uses: named values in the feature's own types, private keys
// sealed with the store's SecretBox (a copy of the database alone gives no key away).
import type { SecretBox } from "../lib/secret-key.ts";
import type { TlsMaterial } from "./certificate.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface TlsStateRepo {
  get(name: string): Promise<string | null>;
  /** Inserts or replaces. */
  put(name: string, value: string, nowMs: number): Promise<void>;
  /** Inserts unless a value is there already (another node made it first): that one is kept. */
  putIfAbsent(name: string, value: string, nowMs: number): Promise<void>;
  remove(name: string): Promise<void>;
  /** Keeps an answer (replacing one for the same token) and drops answers expired at `nowMs`. */
  setChallenge(token: string, keyAuthorization: string, expiresAtMs: number, nowMs: number): Promise<void>;
  /** The key authorization for `token`, or null when there is none or it expired. */
  challenge(token: string, nowMs: number): Promise<string | null>;
  deleteChallenge(token: string): Promise<void>;
}

/** An ACME order that failed, kept until one succeeds (`postroom tls status` reads it). */
export interface OrderFailure {
  atMs: number;
  reason: string;
  retryAtMs: number;
}

/** The ACME account's URL at one directory: with it the next order skips registration. */
export interface AcmeAccount {
  directoryUrl: string;
  accountUrl: string;
}

/**
 * How long an HTTP-01 answer is kept when the order that wrote it never removes it (a
 * crash mid-order): a CA validates within minutes, and an order that waits longer fails.
 */
export const ACME_CHALLENGE_TTL_MS = 60 * 60_000;

const ACCOUNT_KEY = "acme_account_key";
const ACCOUNT = "acme_account";
const CERTIFICATE = "acme_certificate";
const ORDER_FAILURE = "acme_order_failure";

export class TlsStore {
  constructor(
    private readonly repo: TlsStateRepo,
    private readonly box: SecretBox,
    private readonly nowMs: () => number,
  ) {}

  /** The ACME certificate (chain) and its key, or null before the first order. */
  async certificate(): Promise<TlsMaterial | null> {
    const stored = parse<{ cert?: unknown; key?: unknown }>(await this.repo.get(CERTIFICATE));
    if (typeof stored?.cert !== "string" || typeof stored.key !== "string") return null;
    return { cert: stored.cert, key: this.box.open(stored.key) };
  }

  /** Replaces the certificate and its key together (one row). */
  async saveCertificate(material: TlsMaterial): Promise<void> {
    await this.repo.put(CERTIFICATE, JSON.stringify({ cert: material.cert, key: this.box.seal(material.key) }), this.nowMs());
  }

  /** The ACME account key (PEM), or null before the first order. */
  async accountKey(): Promise<string | null> {
    const sealed = await this.repo.get(ACCOUNT_KEY);
    return sealed === null ? null : this.box.open(sealed);
  }

  /** Keeps `pem` as the account key unless there is one already; returns the one kept. */
  async keepAccountKey(pem: string): Promise<string> {
    await this.repo.putIfAbsent(ACCOUNT_KEY, this.box.seal(pem), this.nowMs());
    return (await this.accountKey())!;
  }

  async account(): Promise<AcmeAccount | null> {
    const a = parse<Partial<AcmeAccount>>(await this.repo.get(ACCOUNT));
    return typeof a?.directoryUrl === "string" && typeof a.accountUrl === "string"
      ? { directoryUrl: a.directoryUrl, accountUrl: a.accountUrl }
      : null;
  }

  async saveAccount(account: AcmeAccount): Promise<void> {
    await this.repo.put(ACCOUNT, JSON.stringify(account), this.nowMs());
  }

  async orderFailure(): Promise<OrderFailure | null> {
    const f = parse<Partial<OrderFailure>>(await this.repo.get(ORDER_FAILURE));
    return typeof f?.atMs === "number" && typeof f.reason === "string" && typeof f.retryAtMs === "number"
      ? { atMs: f.atMs, reason: f.reason, retryAtMs: f.retryAtMs }
      : null;
  }

  /** Keeps `failure` as the last order's outcome; null (a success) removes it. */
  async saveOrderFailure(failure: OrderFailure | null): Promise<void> {
    if (failure === null) await this.repo.remove(ORDER_FAILURE);
    else await this.repo.put(ORDER_FAILURE, JSON.stringify(failure), this.nowMs());
  }

  async setChallenge(token: string, keyAuthorization: string): Promise<void> {
    const now = this.nowMs();
    await this.repo.setChallenge(token, keyAuthorization, now + ACME_CHALLENGE_TTL_MS, now);
  }

  challenge(token: string): Promise<string | null> {
    return this.repo.challenge(token, this.nowMs());
  }

  deleteChallenge(token: string): Promise<void> {
    return this.repo.deleteChallenge(token);
  }
}

function parse<T>(json: string | null): T | null {
  if (json === null) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    return null;
  }
}
