// The account registry with the config's accounts and the store's: a config account wins
// over a stored one with its ID, stored tokens carry their scope, suspension is known by
// ID, and finding a Bearer secret's owner does not grow with the number of accounts.
import { describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import { hashSecret } from "../../src/auth/secrets.ts";
import type { StoredAccount } from "../../src/auth/tenants.port.ts";
import type { AccountConfig } from "../../src/config/config.ts";

const stored = (id: string, token: string, key: string, over: Partial<StoredAccount> = {}): StoredAccount => ({
  id,
  name: `stored ${id}`,
  rateLimit: "5/min",
  testMode: false,
  markdown: false,
  domainTargets: false,
  suspended: false,
  createdAtMs: 0,
  updatedAtMs: 0,
  tokens: [
    {
      id: `tok-${id}`,
      accountId: id,
      name: "",
      tokenHash: hashSecret(token),
      readOnly: token.includes("read"),
      createdAtMs: 0,
      lastUsedAtMs: null,
    },
  ],
  outbound: [
    {
      id: `o${id.slice(1)}`,
      accountId: id,
      name: "",
      sendRateLimit: "off",
      ipPool: null,
      testMode: false,
      createdAtMs: 0,
      keys: [{ id: "k", outboundAccountId: `o${id.slice(1)}`, keyHash: hashSecret(key), createdAtMs: 0 }],
    },
  ],
  ...over,
});

const config: AccountConfig = {
  id: "c000000000000001",
  name: "from the file",
  apiTokenHashes: [hashSecret("pr_config_token")],
  rateLimit: null,
  testMode: false,
  markdown: false,
  domainTargets: false,
  webhook: null,
  tracking: { opens: false, clicks: false },
  unsubscribe: { url: null, mailto: null },
  outbound: [],
};

describe("AccountRegistry with stored accounts", () => {
  test("stored accounts authenticate with their scope and standing; a config account wins over a stored one with its ID", () => {
    const registry = new AccountRegistry([config]);
    registry.replaceStored([
      stored("s000000000000001", "pr_read_token", "pr_key_1", { suspended: true }),
      stored("c000000000000001", "pr_shadowed_token", "pr_key_2"),
    ]);
    expect(registry.principalForSecret("pr_read_token")).toMatchObject({
      kind: "account",
      tokenId: "tok-s000000000000001",
      readOnly: true,
    });
    expect(registry.principalForSecret("pr_key_1")).toMatchObject({ kind: "outbound", outbound: { id: "o000000000000001" } });
    expect(registry.principalForNamedSecret("s000000000000001", "pr_read_token")).toMatchObject({ readOnly: true });
    expect(registry.suspended("s000000000000001")).toBe(true);
    expect(registry.source("s000000000000001")).toBe("api");
    expect(registry.source("c000000000000001")).toBe("config");
    expect(registry.account("c000000000000001")!.name).toBe("from the file");
    expect(registry.principalForSecret("pr_shadowed_token")).toBeNull();
    expect(registry.principalForSecret("pr_config_token")).toMatchObject({ kind: "account", account: { id: "c000000000000001" } });
    // A reload of the config keeps the stored accounts, and the reverse.
    registry.replace([]);
    expect(registry.principalForSecret("pr_shadowed_token")).toMatchObject({ kind: "account" });
    registry.replaceStored([]);
    expect(registry.principalForSecret("pr_read_token")).toBeNull();
  });

  test("a stored outbound account carries its ip_pool: the pool picker finds it by the outbound account's ID", () => {
    const registry = new AccountRegistry([config]);
    const s = stored("a000000000000001", "pr_t1", "pr_k1");
    registry.replaceStored([{ ...s, outbound: [{ ...s.outbound[0]!, ipPool: "bulk" }] }]);
    // Before: undefined, so its mail left from the default address.
    expect(registry.outbound(s.outbound[0]!.id)?.outbound.ipPool).toBe("bulk");
  });

  test("finding a Bearer secret's owner among 10,000 accounts takes under a millisecond", () => {
    const registry = new AccountRegistry([config]);
    registry.replaceStored(
      Array.from({ length: 10_000 }, (_, i) => stored(`s${i.toString(16).padStart(15, "0")}`, `pr_token_${i}`, `pr_key_${i}`)),
    );
    const started = performance.now();
    for (let i = 0; i < 20; i++) expect(registry.principalForSecret(`pr_unknown_${i}`)).toBeNull();
    expect((performance.now() - started) / 20).toBeLessThan(1);
    expect(registry.principalForSecret("pr_token_9999")).toMatchObject({ kind: "account" });
  });
});
