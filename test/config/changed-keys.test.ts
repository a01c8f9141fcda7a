// A reload names the keys that changed, never their values.
import { describe, expect, test } from "bun:test";
import { changedKeys } from "../../src/config/changed-keys.ts";

const account = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  api_tokens: ["sha256:aaaa"],
  rate_limit: "5/min",
  outbound: [{ id: `${id}f`, api_keys: ["sha256:bbbb"], send_rate_limit: "600/min" }],
  ...extra,
});

describe("changedKeys", () => {
  test.each([
    ["nothing", { http: { listen: "127.0.0.1:8080" } }, { http: { listen: "127.0.0.1:8080" } }, []],
    ["a top-level key", { hostname: "a" }, { hostname: "b" }, ["hostname"]],
    ["a nested key", { inbound: { target_timeout: "30s" } }, { inbound: { target_timeout: "10s" } }, ["inbound.target_timeout"]],
    ["a key added and one removed", { log: { level: "info" } }, { log: { format: "json" } }, ["log.format", "log.level"]],
    [
      "an account's limit, by its id",
      { accounts: [account("a1"), account("b2")] },
      { accounts: [account("a1", { rate_limit: "60/min" }), account("b2")] },
      ["accounts[a1].rate_limit"],
    ],
    [
      "a token replaced: the key, not the hash",
      { accounts: [account("a1")] },
      { accounts: [account("a1", { api_tokens: ["sha256:cccc"] })] },
      ["accounts[a1].api_tokens"],
    ],
    [
      "an outbound account's key, by both ids",
      { accounts: [account("a1")] },
      { accounts: [account("a1", { outbound: [{ id: "a1f", api_keys: ["sha256:dddd"], send_rate_limit: "600/min" }] })] },
      ["accounts[a1].outbound[a1f].api_keys"],
    ],
    ["an account added first: only it", { accounts: [account("b2")] }, { accounts: [account("a1"), account("b2")] }, ["accounts[a1]"]],
    ["an account removed", { accounts: [account("a1"), account("b2")] }, { accounts: [account("b2")] }, ["accounts[a1]"]],
    ["a list of values", { outbound: { sending_ips: [] } }, { outbound: { sending_ips: ["192.0.2.1"] } }, ["outbound.sending_ips"]],
  ])("%s", (_name, before, after, keys) => {
    expect(changedKeys(before, after)).toEqual(keys);
  });

  test("no value is ever in the answer", () => {
    const keys = changedKeys({ accounts: [account("a1")] }, { accounts: [account("a1", { api_tokens: ["sha256:secret-hash"] })] });
    expect(JSON.stringify(keys)).not.toContain("secret-hash");
  });
});
