// The TenantRepo contract on both engines, and the registry's reload behind it: a change
// and its audit entry commit together or not at all; reads give the same JS types on both;
// a node that hears no notice (follow does nothing) still sees another node's change
// within a second by polling tenant_version (tenant-sync.ts).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import { createAuditRepo } from "../../src/auth/audit.repo.ts";
import { hashSecret } from "../../src/auth/secrets.ts";
import { TenantAdmin } from "../../src/auth/tenant-admin.ts";
import { TenantSync } from "../../src/auth/tenant-sync.ts";
import type { StoredAccountFields, TenantRepo } from "../../src/auth/tenants.port.ts";
import { createTenantRepo } from "../../src/auth/tenants.repo.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";

const FIELDS: StoredAccountFields = {
  name: "n",
  rateLimit: "5/min",
  testMode: false,
  markdown: true,
  domainTargets: false,
  suspended: false,
};
const actor = { operator: "admin_tokens:abcdef012345" };

describe.each(STORE_ENGINES)("TenantRepo on $name", (engine) => {
  let handle: EngineHandle;
  let repo: TenantRepo;
  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    repo = createTenantRepo(handle.db);
  }, 60_000);
  afterAll(() => handle?.close());

  /** A node: its own registry and sync on the shared store, hearing no notice. */
  const node = () => {
    const registry = new AccountRegistry([]);
    const sync = new TenantSync({ repo, registry, logger: silentLogger, follow: async () => {}, pollMs: 100 });
    const admin = new TenantAdmin({ repo, registry, sync, nowMs: Date.now });
    return { registry, sync, admin };
  };

  engine.test("an account reads back with its credentials and JS types; the audit lists each change", async () => {
    const a = node();
    await a.sync.start();
    try {
      const account = await a.admin.createAccount(actor, FIELDS);
      const { token, secret } = (await a.admin.mintToken(actor, account.id, "ro", true))!;
      const { outbound } = (await a.admin.createOutbound(actor, account.id, {
        name: "o",
        sendRateLimit: "off",
        ipPool: "p1",
        testMode: true,
      }))!;
      const stored = (await repo.get(account.id))!;
      expect(stored).toMatchObject({ id: account.id, name: "n", markdown: true, suspended: false, rateLimit: "5/min" });
      expect(typeof stored.createdAtMs).toBe("number");
      expect(stored.tokens).toEqual([{ ...token, lastUsedAtMs: null }]);
      expect(stored.tokens[0]!.tokenHash).toBe(hashSecret(secret));
      expect(stored.outbound).toMatchObject([{ id: outbound.id, ipPool: "p1", testMode: true, sendRateLimit: "off" }]);
      expect(stored.outbound[0]!.keys).toHaveLength(1);
      // The node that made the change holds it at once.
      const principal = a.registry.principalForSecret(secret);
      expect(principal).toMatchObject({ kind: "account", tokenId: token.id, readOnly: true });
      await repo.touchTokens(new Map([[token.id, 1_795_000_000_000]]));
      expect((await repo.get(account.id))!.tokens[0]!.lastUsedAtMs).toBe(1_795_000_000_000);
      const audit = await createAuditRepo(handle.db).list(account.id, { limit: 10 });
      expect(audit.items.map((e) => e.action)).toEqual(["outbound_account.create", "api_token.create", "account.create"]);
      expect(JSON.stringify(audit.items)).not.toContain(secret);
    } finally {
      await a.sync.stop();
    }
  });

  engine.test("a change that finds nothing leaves no audit entry and no step of the version", async () => {
    const version = await repo.version();
    const entry = { id: "x1", createdAtMs: 1, operator: "o", action: "account.delete" as const, target: "ffffffffffffffff", details: {} };
    expect(await repo.deleteAccount("ffffffffffffffff", 1, entry)).toBe(false);
    expect(await repo.removeToken("ffffffffffffffff", "nope", { ...entry, id: "x2" })).toBe(false);
    // A token or outbound account for an account that is gone (deleted while the call ran): nothing.
    const token = {
      id: "t1",
      accountId: "ffffffffffffffff",
      name: "",
      tokenHash: "sha256:00",
      readOnly: false,
      createdAtMs: 1,
      lastUsedAtMs: null,
    };
    expect(await repo.addToken(token, { ...entry, id: "x3", action: "api_token.create" })).toBe(false);
    const outbound = {
      id: "o1",
      accountId: "ffffffffffffffff",
      name: "",
      sendRateLimit: "off",
      ipPool: null,
      testMode: false,
      createdAtMs: 1,
      keys: [],
    };
    expect(await repo.addOutbound(outbound, { ...entry, id: "x4", action: "outbound_account.create" })).toBe(false);
    expect(await repo.version()).toBe(version);
    expect((await createAuditRepo(handle.db).list("ffffffffffffffff", { limit: 10 })).items).toEqual([]);
  });

  engine.test("a node that hears no notice sees another node's revocation within a second (the poll)", async () => {
    const [a, b] = [node(), node()];
    await a.sync.start();
    await b.sync.start();
    try {
      const account = await a.admin.createAccount(actor, FIELDS);
      const { token, secret } = (await a.admin.mintToken(actor, account.id, "", false))!;
      const seen = async (want: boolean) => {
        const started = performance.now();
        while ((b.registry.principalForSecret(secret) !== null) !== want) {
          if (performance.now() - started > 3000) throw new Error("node B never saw the change");
          await Bun.sleep(10);
        }
        return performance.now() - started;
      };
      expect(await seen(true)).toBeLessThan(1000);
      await a.admin.revokeToken(actor, account.id, token.id);
      expect(a.registry.principalForSecret(secret)).toBeNull();
      expect(await seen(false)).toBeLessThan(1000);
    } finally {
      await a.sync.stop();
      await b.sync.stop();
    }
  });
});
