// Postroom as the benchmarks run it: the real `bun src/main.ts serve` as a child process
// (bench/child.ts) with a config generated into the run's temp dir, one account with
// known credentials, and, for the benchmarks that send, a sending domain verified the way
// a customer does it. Each benchmark adds only what it is about (a relay, SMTP in,
// webhooks, /metrics) to the same config.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hashSecret } from "../src/auth/secrets.ts";
import { parseConfigText } from "../src/config/load.ts";
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import { Child } from "./child.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The benchmark's account; the config holds only hashes of its secrets. */
export const ACCOUNT = { id: "b0b0b0b0b0b0b0b0", token: "pr_bench_token", outboundId: "b0b0b0b0b0b0b0f1", smtpKey: "pr_bench_smtp_key" };

/** What a benchmark adds to the common config (TOML lines). */
export interface ConfigParts {
  /** `[http] listen`; an ephemeral port ("127.0.0.1:0", read from the log) unless the benchmark fixes one. */
  httpListen?: string;
  /** Lines at the end of [http] (METRICS_CONFIG, to read /metrics). */
  http?: string;
  /** `[smtp] inbound_listen`; none ("") unless the benchmark sends mail in. */
  inboundListen?: string;
  /** `[smtp] submission_listen`; none ("") unless the benchmark submits mail (AUTH then allowed without TLS, unless `tls`). */
  submissionListen?: string;
  /** A certificate (`[tls] mode = "files"`): submission then offers STARTTLS and takes AUTH only after it, as in production. */
  tls?: { certFile: string; keyFile: string };
  /** Lines at the end of [inbound]. */
  inbound?: string;
  /** Where outbound mail goes (`smarthost = ...`, or `mx_port`...); with it, the sending IP the SPF record authorises. */
  relay?: string;
  /** Whole sections, before [dns]. */
  sections?: string;
  /** Lines at the end of the account (before its outbound account). */
  account?: string;
}

export function postroomConfig(dataDir: string, dnsServer: string, parts: ConfigParts): string {
  const line = (text: string | undefined) => (text ? `${text}\n` : "");
  const relay =
    parts.relay === undefined
      ? ""
      : `# The address the sending domain's SPF record (published in the loopback DNS) authorises.\nsending_ips = ["127.0.0.1"]\n${parts.relay}\n`;
  return `
hostname = "mx.postroom.bench"
data_dir = "${dataDir}"
[log]
# The default level, as in production: one "outbound attempt" line per recipient, one
# "inbound delivered" line per message (bench:outbound and bench:webhooks count the former).
level = "info"
[http]
listen = "${parts.httpListen ?? "127.0.0.1:0"}"
public_url = "http://127.0.0.1:8080"
${line(parts.http)}[smtp]
inbound_listen = "${parts.inboundListen ?? ""}"
submission_listen = "${parts.submissionListen ?? ""}"
allow_insecure_auth = ${parts.submissionListen && !parts.tls ? "true" : "false"}
[inbound]
domain = "in.postroom.bench"
${line(parts.inbound)}[outbound]
bounce_host = "bounces.postroom.bench"
${relay}${line(parts.sections)}${parts.tls ? `[tls]\nmode = "files"\ncert_file = "${parts.tls.certFile}"\nkey_file = "${parts.tls.keyFile}"\n` : ""}[dns]
servers = ["${dnsServer}"]
[[accounts]]
id = "${ACCOUNT.id}"
name = "bench"
api_tokens = ["${hashSecret(ACCOUNT.token)}"]
rate_limit = "off"
${line(parts.account)}  [[accounts.outbound]]
  id = "${ACCOUNT.outboundId}"
  api_keys = ["${hashSecret(ACCOUNT.smtpKey)}"]
  send_rate_limit = "off"
`;
}

/**
 * Starts Postroom with the common config plus `parts` (written to WORKDIR/postroom.toml,
 * data in WORKDIR/data; checked first, so a mistake in it is reported as such and not as
 * a server that never came up), under `bun PROFILEARGS`. Resolves once it serves HTTP;
 * its log lines are still kept (for `waitFor`) until the caller calls `child.ready()`.
 */
export async function startPostroom(
  workDir: string,
  dnsServer: string,
  parts: ConfigParts,
  profileArgs: string[],
): Promise<{ child: Child; httpPort: number }> {
  const configPath = writePostroomConfig(workDir, dnsServer, parts);
  // POSTROOM_BINARY: the built binary (`bun run build`: bytecode, minified), as users run
  // it, instead of the sources under bun; the profiler needs the sources.
  const binary = process.env.POSTROOM_BINARY;
  const child =
    binary && profileArgs.length === 0
      ? Child.spawnCommand("postroom", [resolve(ROOT, binary), "serve", "--config", configPath], ROOT)
      : Child.spawn("postroom", [...profileArgs, "src/main.ts", "serve", "--config", configPath], ROOT);
  const httpPort = (await child.waitFor((l) => l.msg === "http listening")).port as number;
  return { child, httpPort };
}

/** Writes the common config plus `parts` to WORKDIR/postroom.toml (data in WORKDIR/data), checked first; its path. */
export function writePostroomConfig(workDir: string, dnsServer: string, parts: ConfigParts): string {
  const configPath = join(workDir, "postroom.toml");
  const text = postroomConfig(join(workDir, "data"), dnsServer, parts);
  const parsed = parseConfigText(text);
  if (!parsed.ok) throw new Error(`the benchmark's Postroom config is invalid:\n${parsed.problems.join("\n")}`);
  writeFileSync(configPath, text);
  return configPath;
}

/** The Bearer token of GET /metrics; the config holds its hash (METRICS_CONFIG). */
const METRICS_TOKEN = "pr_bench_metrics_token";

/** The [http] line that turns Postroom's /metrics on (ConfigParts.http): off by default, as in production. */
export const METRICS_CONFIG = `metrics_token = "${hashSecret(METRICS_TOKEN)}"`;

/**
 * The value of the unlabelled metric `name` on Postroom's /metrics (needs METRICS_CONFIG).
 * Its gauges are read from the store when scraped (postroom_webhook_events_pending is a
 * COUNT of the pending outbox rows), so a scrape costs Postroom a query: read them now
 * and then, not in a tight loop.
 */
export async function readMetric(httpPort: number, name: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text.slice(0, 200)}`);
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`GET /metrics has no unlabelled ${name}`);
  return Number(line.slice(name.length + 1));
}

/** POSTs to the account's API (as its owner, with the API token); the status and the JSON answer. */
async function accountApi<T>(httpPort: number, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.id}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/**
 * The sender's domain, added and verified the way a customer does it (E15, E18): created
 * through the API, every record it lists published in the loopback DNS (the optional
 * Ed25519 DKIM record too, so messages carry both signatures), then verified. Mail is
 * only accepted from a verified domain, and DKIM-signed with its keys.
 */
export async function verifiedSendingDomain(httpPort: number, dns: TestDnsServer, domain: string): Promise<void> {
  type Answer = { id?: string; dns_records?: { type: string; host: string; value: string; reason: string | null }[] };
  const created = await accountApi<Answer>(httpPort, "/sending_domains", { domain });
  if (created.status !== 201 || !created.body.id || !created.body.dns_records)
    throw new Error(`creating the sending domain ${domain} failed: ${created.status} ${JSON.stringify(created.body)}`);
  dns.followCnames = true;
  for (const r of created.body.dns_records) {
    if (r.type === "CNAME") dns.set(r.host, [{ type: "CNAME", domain: r.value }]);
    else
      dns.set(r.host, [
        ...(dns.zone.get(r.host) ?? []).filter((x) => x.type !== "TXT"),
        { type: "TXT", data: r.value.match(/.{1,255}/g) ?? [""] },
      ]);
  }
  const verified = await accountApi<Answer>(httpPort, `/sending_domains/${created.body.id}/verify`);
  if (verified.status !== 200)
    throw new Error(
      `verifying the sending domain ${domain} failed: ${verified.status} ${JSON.stringify(verified.body.dns_records?.map((r) => r.reason))}`,
    );
}

/** An address of the account whose mail Postroom POSTs to `target` (format json+n); its email. */
export async function inboundAddress(httpPort: number, target: string): Promise<string> {
  const created = await accountApi<{ email?: string }>(httpPort, "/addresses", { target, target_format: "json+n" });
  if (created.status !== 201 || !created.body.email)
    throw new Error(`creating the benchmark address failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.email;
}
