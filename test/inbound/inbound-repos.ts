// The inbound repositories (addresses, custom domains) on one store engine, for their
// contract tests: the same cases run on SQLite and PostgreSQL (test/helpers/engines.ts).
import type { Address } from "../../src/inbound/addresses/address.ts";
import type { CustomDomain } from "../../src/inbound/addresses/custom-domain.ts";
import type { AddressRepo } from "../../src/inbound/addresses/addresses.port.ts";
import { createAddressRepo } from "../../src/inbound/addresses/addresses.repo.ts";
import type { CustomDomainRepo } from "../../src/inbound/addresses/custom-domains.port.ts";
import { createCustomDomainRepo } from "../../src/inbound/addresses/custom-domains.repo.ts";
import { secretBox } from "../../src/lib/secret-key.ts";
import type { EngineHandle, StoreEngine } from "../helpers/engines.ts";

export interface InboundRepos {
  handle: EngineHandle;
  addresses: AddressRepo;
  customDomains: CustomDomainRepo;
  /** The routing cache's clock. */
  clock: { nowMs: number };
  /** A row as stored, column for column (to see what is kept encrypted). */
  stored(table: "addresses" | "custom_domains", id: string): Promise<Record<string, unknown> | null>;
}

export const INBOUND_TABLES = ["custom_domains", "addresses"] as const;

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
export const NOW_MS = 1_795_000_000_000;

export async function openInboundRepos(engine: StoreEngine): Promise<InboundRepos> {
  const handle = await engine.open();
  const clock = { nowMs: NOW_MS };
  const nowMs = () => clock.nowMs;
  if (handle.kind === "sqlite") {
    const { store } = handle;
    return {
      handle,
      clock,
      addresses: createAddressRepo(handle.db, store.secrets, nowMs),
      customDomains: createCustomDomainRepo(handle.db, store.secrets),
      stored: async (table, id) => store.db.query<Record<string, unknown>, [string]>(`SELECT * FROM ${table} WHERE id = ?`).get(id),
    };
  }
  const { sql } = handle;
  // The secrets key of this test (SQLite's store makes its own in data_dir/keys).
  const secrets = secretBox(() => Buffer.alloc(32, 7));
  return {
    handle,
    clock,
    addresses: createAddressRepo(handle.db, secrets, nowMs),
    customDomains: createCustomDomainRepo(handle.db, secrets),
    stored: async (table, id) => {
      const rows: Record<string, unknown>[] = await sql`SELECT * FROM ${sql(table)} WHERE id = ${id}`;
      return rows[0] ?? null;
    },
  };
}

export const address = (id: string, over: Partial<Address> = {}): Address => ({
  id,
  accountId: "acc_a",
  target: { url: `https://user@example.com/hook/${id}`, password: null },
  targetFormat: "json+n",
  nickname: null,
  attachments: {},
  signingSecret: null,
  storeMessages: false,
  onTargetFailure: "defer",
  spamThreshold: null,
  createdAtMs: NOW_MS,
  updatedAtMs: NOW_MS,
  ...over,
});

export const customDomain = (id: string, name: string, over: Partial<CustomDomain> = {}): CustomDomain => ({
  id,
  accountId: "acc_a",
  addressId: "addr_a",
  domain: name,
  authRegex: null,
  domainTarget: null,
  mxVerified: false,
  mxCheckedAtMs: null,
  createdAtMs: NOW_MS,
  ...over,
});
