// The port through which custom domains are kept, whatever the engine:
// custom-domains.repo.ts implements it once for SQLite and PostgreSQL, and
// one contract test (test/inbound/addresses/custom-domains-repo.contract.test.ts) runs the same cases
// on both. A live domain is unique server-wide (partial unique index), so a second claim
// fails at insert even when two requests race, on any node.
import type { SecretBox } from "../../lib/secret-key.ts";
import type { Page, PageRequest } from "../../store/paging.ts";
import type { CustomDomain } from "./custom-domain.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface CustomDomainRepo {
  /** Throws DomainTakenError when a live record already has the domain. */
  insert(d: CustomDomain): Promise<void>;
  get(accountId: string, addressId: string, id: string): Promise<CustomDomain | null>;
  findLiveByDomain(domain: string): Promise<CustomDomain | null>;
  /** Newest first; `query` matches a part of the domain, ASCII letters without case. */
  list(accountId: string, addressId: string, query: string | null, page: PageRequest): Promise<Page<CustomDomain>>;
  softDelete(accountId: string, addressId: string, id: string, nowMs: number): Promise<boolean>;
  recordMxCheck(id: string, verified: boolean, nowMs: number): Promise<void>;
}

/** A custom_domains row as both engines give it once integers are numbers. */
export interface CustomDomainRow {
  id: string;
  account_id: string;
  address_id: string;
  domain: string;
  auth_regex: string | null;
  domain_target: string | null;
  domain_target_password: string | null;
  mx_verified: number;
  mx_checked_at: number | null;
  created_at: number;
}

/** The domain target's password is stored encrypted. */
export const customDomainFromRow = (r: CustomDomainRow, box: SecretBox): CustomDomain => ({
  id: r.id,
  accountId: r.account_id,
  addressId: r.address_id,
  domain: r.domain,
  authRegex: r.auth_regex,
  domainTarget:
    r.domain_target === null
      ? null
      : { url: r.domain_target, password: r.domain_target_password === null ? null : box.open(r.domain_target_password) },
  mxVerified: r.mx_verified === 1,
  mxCheckedAtMs: r.mx_checked_at,
  createdAtMs: r.created_at,
});

/** The sealed domain target password to store, or null. */
export const sealedDomainTargetPassword = (d: CustomDomain, box: SecretBox): string | null =>
  d.domainTarget?.password == null ? null : box.seal(d.domainTarget.password);
