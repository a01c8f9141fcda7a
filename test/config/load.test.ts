import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { parse as parseToml } from "smol-toml";
import { parseConfigText } from "../../src/config/load.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

const HASH = "sha256:" + "ab".repeat(32);
const HASH2 = "sha256:" + "cd".repeat(32);

const NODE_ID_RULE = 'must be 1 to 64 letters, digits, ".", "_" or "-" (or "" for the machine\'s hostname)';

function problemsOf(toml: string): string[] {
  const r = parseConfigText(toml);
  return r.ok ? [] : r.problems;
}

describe("config errors name the key path and the rule", () => {
  test.each([
    ["unknown top-level key", `colour = "blue"`, "colour: unknown key"],
    ["unknown key in a section", `[http]\nport = 80`, "http.port: unknown key"],
    [
      "unknown key in an account",
      `[[accounts]]\nid = "0123456789abcdef"\nnmae = "x"`,
      'accounts[0].nmae: unknown key; did you mean "name"?',
    ],
    ["account id not hex", `[[accounts]]\nid = "XYZ"`, "accounts[0].id: must be 16 lowercase hex"],
    ["account id missing", `[[accounts]]\nname = "x"`, "accounts[0].id: is required"],
    [
      "outbound id wrong length",
      `[[accounts]]\nid = "0123456789abcdef"\n[[accounts.outbound]]\nid = "abc"`,
      "accounts[0].outbound[0].id: must be 16 lowercase hex",
    ],
    [
      "token not a hash",
      `[[accounts]]\nid = "0123456789abcdef"\napi_tokens = ["plaintext"]`,
      "accounts[0].api_tokens[0]: must be sha256:<64 lowercase hex> (mint one with `postroom secret`)",
    ],
    [
      "rate limit",
      `[[accounts]]\nid = "0123456789abcdef"\nrate_limit = "5/day"`,
      'accounts[0].rate_limit: must be "N/s", "N/min", "N/h" or "off"',
    ],
    ["duration", `[inbound]\ntarget_timeout = "30"`, 'inbound.target_timeout: must be a duration such as "30s", "5m", "2h" or "5d"'],
    ["log flush interval", `[log]\nflush_interval = "soon"`, 'log.flush_interval: must be a duration such as "30s", "5m", "2h" or "5d"'],
    [
      "duration of wrong type",
      `[inbound]\ntarget_timeout = 30`,
      'inbound.target_timeout: must be a duration such as "30s", "5m", "2h" or "5d"',
    ],
    ["size", `[smtp]\nmax_message_size = "25 megs"`, 'smtp.max_message_size: must be a size such as "512KB", "25MB" or "1GB"'],
    [
      "share past 100%",
      `[limits]\nmail_in_flight_per_client = "150%"`,
      'limits.mail_in_flight_per_client: must be a percentage from 0% to 100% (such as "25%") or a size such as "64MB"',
    ],
    [
      "share that is neither",
      `[limits]\nmail_in_flight_reserved = "a quarter"`,
      'limits.mail_in_flight_reserved: must be a percentage from 0% to 100% (such as "25%") or a size such as "64MB"',
    ],
    [
      "listen address",
      `[http]\nlisten = "8080"`,
      'http.listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
    ],
    [
      "listen port past 65535",
      `[http]\nlisten = "127.0.0.1:99999"`,
      'http.listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
    ],
    [
      "listen port past 65535 on an SMTP listener",
      `[smtp]\nsubmission_tls_listen = "[::1]:65536"`,
      'smtp.submission_tls_listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
    ],
    ["boolean", `[smtp]\nallow_insecure_auth = "yes"`, "smtp.allow_insecure_auth: must be boolean"],
    [
      "a session time of zero",
      `[smtp]\nmax_session_time = "0s"`,
      'smtp.max_session_time: must be a duration above zero such as "30s", "10m" or "1h"',
    ],
    [
      "a search time limit of zero",
      `[http]\nsearch_timeout = "0ms"`,
      'http.search_timeout: must be a duration above zero such as "30s", "10m" or "1h"',
    ],
    ["no search terms at all", `[http]\nsearch_max_terms = 0`, "http.search_max_terms: must be an integer from 1 to 100"],
    ["a batch of no messages", `[outbound]\nbatch_max_messages = 0`, "outbound.batch_max_messages: must be an integer from 1 to 10000"],
    [
      "send_at allowed no time ahead",
      `[outbound]\nmax_send_ahead = "0s"`,
      'outbound.max_send_ahead: must be a duration above zero such as "30s", "10m" or "1h"',
    ],
    ["integer range", `[outbound]\nmx_port = 0`, "outbound.mx_port: must be a port number (1-65535)"],
    [
      "a negative TLS session cache",
      `[outbound]\ntls_session_cache = -1`,
      "outbound.tls_session_cache: must be an integer from 0 to 100000",
    ],
    [
      "no webhook endpoints allowed at all",
      `[outbound]\nwebhook_endpoints_max = 0`,
      "outbound.webhook_endpoints_max: must be an integer from 1 to 100",
    ],
    ["a pool of one PostgreSQL connection", `[store]\nmax_connections = 1`, "store.max_connections: must be an integer from 2 to 1000"],
    [
      "a destination's initial connections",
      `[outbound]\ninitial_domain_concurrency = 0`,
      "outbound.initial_domain_concurrency: must be an integer from 1 to 100",
    ],
    [
      "a destination's most connections",
      `[outbound]\ndomain_concurrency = 101`,
      "outbound.domain_concurrency: must be an integer from 1 to 100",
    ],
    ["sending ip", `[outbound]\nsending_ips = ["203.0.113.300"]`, "outbound.sending_ips[0]: must be an IPv4 or IPv6 address"],
    [
      "a trusted proxy that is a name",
      `[http]\ntrusted_proxies = ["proxy.internal"]`,
      'http.trusted_proxies[0]: "proxy.internal" is not an IP address or CIDR range (such as "127.0.0.1", "10.0.0.0/8" or "fd00::/8")',
    ],
    [
      "a trusted proxy range past /32",
      `[http]\ntrusted_proxies = ["127.0.0.1", "10.0.0.0/33"]`,
      'http.trusted_proxies[1]: "10.0.0.0/33" is not an IP address or CIDR range (such as "127.0.0.1", "10.0.0.0/8" or "fd00::/8")',
    ],
    [
      "a trusted proxy in classful IPv4",
      `[http]\ntrusted_proxies = ["127.1"]`,
      'http.trusted_proxies[0]: "127.1" is not an IP address or CIDR range (such as "127.0.0.1", "10.0.0.0/8" or "fd00::/8")',
    ],
    [
      "a trusted proxy that is not a string",
      `[http]\ntrusted_proxies = [127]`,
      'http.trusted_proxies[0]: must be an IP address or CIDR range such as "127.0.0.1" or "10.0.0.0/8"',
    ],
    ["trusted proxies not a list", `[http]\ntrusted_proxies = "127.0.0.1"`, "http.trusted_proxies: must be array"],
    [
      "smarthost",
      `[outbound]\nsmarthost = "relay.example.com"`,
      'outbound.smarthost: must be "smtp://[user:pass@]host[:port]" or "smtps://..."',
    ],
    ["dns server", `[dns]\nservers = ["resolver.local"]`, 'dns.servers[0]: must be "ip" or "ip:port"'],
    ["log level", `[log]\nlevel = "loud"`, 'log.level: must be "debug", "info", "warn" or "error"'],
    ["tls mode", `[tls]\nmode = "on"`, 'tls.mode: must be "off", "files" or "acme"'],
    ["public url", `[http]\npublic_url = "localhost"`, "http.public_url: must be an http(s) URL"],
    ["hostname", `hostname = "mx example"`, "hostname: must be a host name such as mx.example.com"],
    [
      "webhook secret",
      `[[accounts]]\nid = "0123456789abcdef"\nwebhook = { url = "https://h.example/x", token = "t", signing_secret = "nope" }`,
      'accounts[0].webhook.signing_secret: must start with "whsec_" followed by Base64',
    ],
    ["webhook url", `[[accounts]]\nid = "0123456789abcdef"\nwebhook = { token = "t" }`, "accounts[0].webhook.url: is required"],
    ["section of wrong type", `http = 5`, "http: must be object"],
    ["a node id with a space", `[cluster]\nnode_id = "node 1"`, `cluster.node_id: ${NODE_ID_RULE}`],
    ["a node id with a slash", `[cluster]\nnode_id = "eu/1"`, `cluster.node_id: ${NODE_ID_RULE}`],
    ["a node id past 64 characters", `[cluster]\nnode_id = "${"n".repeat(65)}"`, `cluster.node_id: ${NODE_ID_RULE}`],
    ["a node id that is not a string", `[cluster]\nnode_id = 7`, `cluster.node_id: ${NODE_ID_RULE}`],
    ["tls files without files", `[tls]\nmode = "files"`, 'tls.cert_file: is required when tls.mode is "files"'],
    ["acme without domains", `[tls]\nmode = "acme"`, 'tls.acme.domains: needs at least one name when tls.mode is "acme"'],
    ["http listener off", `[http]\nlisten = ""`, "http.listen: is required: the API and /healthz live there"],
    [
      "a recipient lease under a second",
      `[outbound]\nlease_time = "500ms"`,
      'outbound.lease_time: must be at least 1s, not "500ms": the node renews its leases every third of it',
    ],
    [
      "no recipient lease at all",
      `[outbound]\nlease_time = "0s"`,
      'outbound.lease_time: must be at least 1s, not "0s": the node renews its leases every third of it',
    ],
    [
      "a suppression that never lasts",
      `[outbound]\nsuppression_ttl = "0s"`,
      'outbound.suppression_ttl: must be a duration above zero such as "30s", "10m" or "1h"',
    ],
    [
      "a suppression time that is no duration",
      `[outbound]\nsuppression_ttl = "soon"`,
      'outbound.suppression_ttl: must be a duration above zero such as "30s", "10m" or "1h"',
    ],
    [
      "a webhook lease under a second",
      `[webhooks]\nlease_time = "999ms"`,
      'webhooks.lease_time: must be at least 1s, not "999ms": the node renews its leases every third of it',
    ],
    [
      "a job lease under a second",
      `[cluster]\njob_lease_time = "0.5s"`,
      'cluster.job_lease_time: must be at least 1s, not "0.5s": the node renews its leases every third of it',
    ],
    [
      "an outbound ID equal to an account ID",
      `[[accounts]]\nid = "0123456789abcdef"\n[[accounts.outbound]]\nid = "0123456789abcdef"`,
      "accounts[0].outbound[0].id: duplicates the ID at accounts[0].id",
    ],
    [
      "two accounts with one ID",
      `[[accounts]]\nid = "0123456789abcdef"\n[[accounts]]\nid = "0123456789abcdef"`,
      "accounts[1].id: duplicates the ID at accounts[0].id",
    ],
    [
      "one secret in two places",
      `[[accounts]]\nid = "0123456789abcdef"\napi_tokens = ["${HASH}"]\n[[accounts.outbound]]\nid = "fedcba9876543210"\napi_keys = ["${HASH}"]`,
      "accounts[0].outbound[0].api_keys[0]: the same secret is already used at accounts[0].api_tokens[0]; mint one per use with `postroom secret`",
    ],
    [
      "inbound.retry_delays not durations",
      `[inbound]\nretry_delays = ["soon"]`,
      'inbound.retry_delays[0]: must be a duration such as "5m"',
    ],
    [
      "inbound.retry_delays empty",
      `[inbound]\nretry_delays = []`,
      'inbound.retry_delays: must list at least one duration, such as ["1m", "5m", "1h"]',
    ],
    [
      "inbound.max_queue_time zero",
      `[inbound]\nmax_queue_time = "0s"`,
      'inbound.max_queue_time: must be a duration above zero such as "30s", "10m" or "1h"',
    ],
    [
      "inbound.max_queued_per_account not a size",
      `[inbound]\nmax_queued_per_account = "lots"`,
      'inbound.max_queued_per_account: must be a size such as "512KB", "25MB" or "1GB"',
    ],
    ["TOML syntax", `[http\nlisten = "x"`, "line 1, column 6: Invalid TOML document: illegal character in key"],
  ])("%s", (_name, toml, expected) => {
    expect(problemsOf(toml)).toContain(expected);
  });

  test("every problem is listed, not just the first", () => {
    const problems = problemsOf(`colour = 1\n[http]\nlisten = "x"\n[inbound]\ntarget_timeout = "x"\n[[accounts]]\nid = "no"`);
    expect(problems).toEqual([
      "colour: unknown key",
      'http.listen: must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
      'inbound.target_timeout: must be a duration such as "30s", "5m", "2h" or "5d"',
      "accounts[0].id: must be 16 lowercase hex",
    ]);
  });
});

describe("a valid config", () => {
  test("an empty file gets every default, with units converted", () => {
    const r = parseConfigText("");
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.inbound.targetTimeoutMs).toBe(30_000);
    expect(r.config.smtp.maxMessageSizeBytes).toBe(25 * 1024 * 1024);
    expect(r.config.outbound.maxQueueTimeMs).toBe(5 * 86_400_000);
    expect(r.config.http.listen).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(r.config.smtp.submissionTlsListen).toBeNull();
    expect(r.config.outbound.smarthost).toBeNull();
    expect(r.config.accounts).toEqual([]);
    expect(r.config.http.trustedProxies).toEqual([]);
    expect(r.config.inbound.retryDelaysMs).toEqual([60_000, 300_000, 900_000, 3_600_000, 7_200_000, 14_400_000]);
    expect(r.config.inbound.maxQueueTimeMs).toBe(3 * 86_400_000);
    expect(r.config.inbound.maxQueuedBytesPerAccount).toBe(1024 ** 3);
  });

  test("http.trusted_proxies: addresses and CIDR ranges of both families", () => {
    const r = parseConfigText(`[http]\ntrusted_proxies = ["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"]`);
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.http.trustedProxies).toEqual(["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"]);
  });

  test("cluster.node_id: the machine's hostname when empty, else as written (64 characters at most)", () => {
    const byDefault = parseConfigText("");
    const named = parseConfigText(`[cluster]\nnode_id = "Mx-2.eu_west"`);
    const longest = parseConfigText(`[cluster]\nnode_id = "${"n".repeat(64)}"`);
    if (!byDefault.ok || !named.ok || !longest.ok) throw new Error("refused");
    expect(byDefault.config.cluster.nodeId).toBe(hostname());
    expect(named.config.cluster.nodeId).toBe("Mx-2.eu_west");
    expect(longest.config.cluster.nodeId).toBe("n".repeat(64));
  });

  test("accounts keep hashes and rates; account test_mode forces its outbound accounts", () => {
    const r = parseConfigText(
      `[[accounts]]\nid = "0123456789abcdef"\napi_tokens = ["${HASH}"]\nrate_limit = "off"\ntest_mode = true\n[[accounts.outbound]]\nid = "fedcba9876543210"\napi_keys = ["${HASH2}"]`,
    );
    if (!r.ok) throw new Error(r.problems.join("\n"));
    const [a] = r.config.accounts;
    expect(a!.apiTokenHashes).toEqual([HASH]);
    expect(a!.rateLimit).toBeNull();
    expect(a!.outbound[0]!.sendRateLimit).toEqual({ limit: 600, windowMs: 60_000 });
    expect(a!.outbound[0]!.testMode).toBe(true);
  });
});

describe("config.example.toml", () => {
  const text = require("node:fs").readFileSync(new URL("../../config.example.toml", import.meta.url), "utf8") as string;

  test("is valid as is", () => {
    const r = parseConfigText(text);
    expect(r.ok ? [] : r.problems).toEqual([]);
  });

  test("sets and documents every key of the schema", () => {
    const example = parseToml(text) as Record<string, unknown>;
    const missing: string[] = [];
    const walk = (schema: any, value: any, path: string) => {
      if (schema.type === "object" && schema.properties) {
        for (const [key, sub] of Object.entries<any>(schema.properties)) {
          const p = path ? `${path}.${key}` : key;
          // An optional key with no default may be documented as a commented-out line.
          // So may an array of tables that is empty by default, as commented-out tables: a
          // live [[outbound.ip_pools]] would need addresses every host has.
          const commented =
            (sub.default === undefined && text.includes(`# ${key} =`)) ||
            (sub.type === "array" && Array.isArray(sub.default) && text.includes(`# [[${p}]]`));
          if (value === undefined || value === null || !(key in value)) {
            if (!commented) missing.push(p);
          } else walk(sub, value[key], p);
          const table = `[${p.replace(/\[0\]/g, "")}]`;
          if (!text.includes(`${key} =`) && !text.includes(table)) missing.push(`${p} (no line)`);
        }
      } else if (schema.type === "array" && schema.items?.type === "object") {
        if (!Array.isArray(value) || value.length === 0) missing.push(`${path}[]`);
        else walk(schema.items, value[0], `${path}[0]`);
      }
    };
    walk(ConfigSchema, example, "");
    expect(missing).toEqual([]);
  });

  test("every key of the schema has a description and (but for IDs) a default", () => {
    const undocumented: string[] = [];
    const walk = (schema: any, path: string) => {
      for (const [key, sub] of Object.entries<any>(schema.properties ?? {})) {
        const p = path ? `${path}.${key}` : key;
        if (!sub.description && sub.type !== "object") undocumented.push(`${p}: no description`);
        if (sub.default === undefined && !(schema.required ?? []).includes(key) && !["webhook", "warmup"].includes(key))
          undocumented.push(`${p}: no default`);
        if (sub.type === "object") walk(sub, p);
        if (sub.type === "array" && sub.items?.type === "object") walk(sub.items, `${p}[]`);
      }
    };
    walk(ConfigSchema, "");
    expect(undocumented).toEqual([]);
  });
});
