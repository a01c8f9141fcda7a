// Reads the TOML file, fills defaults, validates it against the schema and the rules
// that span several keys, and converts units. Every problem is collected with its key
// path so one run of `postroom check-config` shows them all.
import { destinationRule } from "./destinations.ts";
import { Value } from "@sinclair/typebox/value";
import { parseShare } from "../lib/memory-shares.ts";
import { spareCoreWorkers } from "../lib/worker-pool.ts";
import { availableParallelism, hostname } from "node:os";
import { parse as parseToml, TomlError } from "smol-toml";
import "../lib/formats.ts";
import { formatProblem } from "../lib/validation.ts";
import type { Config, WebhookConfig } from "./config.ts";
import { crossKeyProblems } from "./cross-key.ts";
import { describeAccessError, fileProblems } from "./files.ts";
import { hostAddressProblems } from "./host-addresses.ts";
import { ipPoolsOf, sendingIpsOf } from "./ip-pools.ts";
import { ConfigSchema, type RawAccount, type RawConfig } from "./schema.ts";
import { schemaProblems } from "./schema-problems.ts";
import { parseDurationMs, parseListen, parseRate, parseSizeBytes, type ListenAddress, type RateLimit } from "./units.ts";

/** `raw`: the file as read, with defaults: what a reload compares (changed-keys.ts). */
export type ConfigResult = { ok: true; config: Config; raw: RawConfig } | { ok: false; problems: string[] };

/** The file and every file it names (certificates, CA bundles): all problems at once. */
export async function loadConfigFile(path: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await Bun.file(path).text();
  } catch (err) {
    return { ok: false, problems: [describeAccessError(err as NodeJS.ErrnoException)] };
  }
  const data = parseTomlText(text);
  if (!data.ok) return data;
  const checked = validateConfigData(data.value);
  const files = [...(await fileProblems(data.value)), ...(await hostAddressProblems(data.value))].map(formatProblem);
  if (files.length === 0) return checked;
  return { ok: false, problems: [...(checked.ok ? [] : checked.problems), ...files] };
}

export function parseConfigText(text: string): ConfigResult {
  const data = parseTomlText(text);
  return data.ok ? validateConfigData(data.value) : data;
}

function parseTomlText(text: string): { ok: true; value: unknown } | { ok: false; problems: string[] } {
  try {
    return { ok: true, value: parseToml(text) };
  } catch (err) {
    if (err instanceof TomlError) return { ok: false, problems: [`line ${err.line}, column ${err.column}: ${err.message.split("\n")[0]}`] };
    return { ok: false, problems: [(err as Error).message] };
  }
}

function validateConfigData(data: unknown): ConfigResult {
  const withDefaults = Value.Default(ConfigSchema, structuredClone(data));
  const problems = schemaProblems(withDefaults);
  if (problems.length > 0) return { ok: false, problems: problems.map(formatProblem) };
  const raw = withDefaults as RawConfig;
  const crossKey = crossKeyProblems(raw);
  if (crossKey.length > 0) return { ok: false, problems: crossKey.map(formatProblem) };
  return { ok: true, config: toConfig(raw), raw };
}

// The schema's patterns already accepted these strings, so the parsers cannot fail here.
const ms = (s: string): number => parseDurationMs(s)!;
const bytes = (s: string): number => parseSizeBytes(s)!;
const rate = (s: string): RateLimit | null => parseRate(s)!;
const keepMs = (s: string): number | null => (s.trim() === "off" ? null : ms(s));
const listenOrOff = (s: string): ListenAddress | null => (s === "" ? null : parseListen(s));

const webhookOf = (w: RawAccount["webhook"]): WebhookConfig | null =>
  w ? { url: w.url, token: w.token, signingSecret: w.signing_secret || null } : null;

export function toConfig(raw: RawConfig): Config {
  return {
    hostname: raw.hostname.toLowerCase(),
    dataDir: raw.data_dir,
    store: {
      postgresUrl: raw.store.url === "" ? null : raw.store.url,
      connectTimeoutMs: ms(raw.store.connect_timeout),
      maxConnections: raw.store.max_connections,
    },
    cluster: { nodeId: raw.cluster.node_id === "" ? hostname() : raw.cluster.node_id, jobLeaseMs: ms(raw.cluster.job_lease_time) },
    log: { level: raw.log.level, flushIntervalMs: ms(raw.log.flush_interval) },
    http: {
      listen: listenOrOff(raw.http.listen),
      publicUrl: raw.http.public_url.replace(/\/+$/, ""),
      maxBodyBytes: bytes(raw.http.max_body_size),
      maxJsonDepth: raw.http.max_json_depth,
      searchWindowRows: raw.http.search_window,
      searchMaxTerms: raw.http.search_max_terms,
      searchTimeoutMs: ms(raw.http.search_timeout),
      tls: raw.http.tls,
      metricsTokenHash: raw.http.metrics_token || null,
      trustedProxies: raw.http.trusted_proxies,
    },
    smtp: {
      inboundListen: listenOrOff(raw.smtp.inbound_listen),
      submissionListen: listenOrOff(raw.smtp.submission_listen),
      submissionTlsListen: listenOrOff(raw.smtp.submission_tls_listen),
      maxMessageSizeBytes: bytes(raw.smtp.max_message_size),
      allowInsecureAuth: raw.smtp.allow_insecure_auth,
      maxRecipients: raw.smtp.max_recipients,
      maxUnknownRecipients: raw.smtp.max_unknown_recipients,
      maxHeaderBytes: bytes(raw.smtp.max_header_size),
      maxMimeDepth: raw.smtp.max_mime_depth,
      maxMimeParts: raw.smtp.max_mime_parts,
      maxConnections: raw.smtp.max_connections,
      socketTimeoutMs: ms(raw.smtp.socket_timeout),
      maxConnectionsPerIp: raw.smtp.max_connections_per_ip,
      maxJunkCommands: raw.smtp.max_junk_commands,
      maxSessionMs: ms(raw.smtp.max_session_time),
      minDataRate: raw.smtp.min_data_rate,
      dataRateWindowMs: ms(raw.smtp.data_rate_window),
      authTimeoutMs: ms(raw.smtp.auth_timeout),
      authFailures: {
        failuresBeforeDelay: raw.smtp.auth_failures_before_delay,
        delayMs: ms(raw.smtp.auth_failure_delay),
        maxDelayMs: ms(raw.smtp.auth_failure_max_delay),
        failuresBeforeClose: raw.smtp.auth_failures_before_close,
        windowMs: ms(raw.smtp.auth_failure_window),
        trackedClients: raw.smtp.auth_failure_clients,
      },
    },
    limits: {
      mailInFlightBytes: bytes(raw.limits.mail_in_flight),
      mailInFlightPerClient: parseShare(raw.limits.mail_in_flight_per_client, parseSizeBytes)!,
      mailInFlightReserved: parseShare(raw.limits.mail_in_flight_reserved, parseSizeBytes)!,
      mailInFlightIdleMs: ms(raw.limits.mail_in_flight_idle_time),
      mailInFlightMaxWaitMs: ms(raw.limits.mail_in_flight_max_wait),
    },
    inbound: {
      domain: raw.inbound.domain.toLowerCase(),
      targetTimeoutMs: ms(raw.inbound.target_timeout),
      allowPrivateTargets: raw.inbound.allow_private_targets,
      maxRedirects: raw.inbound.max_redirects,
      targetResponseMaxBytes: bytes(raw.inbound.target_response_max),
      attachmentUrlTtlMs: ms(raw.inbound.attachment_url_ttl),
      statusRetryRows: raw.inbound.status_retry_rows,
      // Every core but the main thread's, at most four: on 2 cores one worker checks SPF and
      // DKIM while the main thread parses (extract-pool.ts says where the work goes).
      parseWorkers: raw.inbound.parse_workers === "auto" ? spareCoreWorkers(availableParallelism()) : raw.inbound.parse_workers,
      // At least a second apart: a zero wait would post to a failing target in a loop.
      retryDelaysMs: raw.inbound.retry_delays.map((d) => Math.max(1000, ms(d))),
      maxQueueTimeMs: ms(raw.inbound.max_queue_time),
      maxQueuedBytesPerAccount: bytes(raw.inbound.max_queued_per_account),
      spamd:
        raw.inbound.spamd.address === ""
          ? null
          : {
              at: parseListen(raw.inbound.spamd.address)!,
              timeoutMs: ms(raw.inbound.spamd.timeout),
              maxBytes: bytes(raw.inbound.spamd.max_size),
            },
    },
    outbound: {
      bounceHost: raw.outbound.bounce_host.toLowerCase(),
      sendingIps: sendingIpsOf(raw),
      ipPools: ipPoolsOf(raw),
      smarthost: raw.outbound.smarthost === "" ? null : raw.outbound.smarthost,
      mxPort: raw.outbound.mx_port,
      allowPrivateMx: raw.outbound.allow_private_mx,
      maxQueueTimeMs: ms(raw.outbound.max_queue_time),
      suppressionTtlMs: ms(raw.outbound.suppression_ttl),
      maxRecipients: raw.outbound.max_recipients,
      maxSizeBytes: bytes(raw.outbound.max_size),
      maxSendAheadMs: ms(raw.outbound.max_send_ahead),
      batchMaxMessages: raw.outbound.batch_max_messages,
      concurrency: raw.outbound.concurrency,
      domainConcurrency: raw.outbound.domain_concurrency,
      initialDomainConcurrency: raw.outbound.initial_domain_concurrency,
      destinations: raw.outbound.destinations.map(destinationRule),
      tlsSessionCache: raw.outbound.tls_session_cache,
      retryDelaysMs: raw.outbound.retry_delays.map(ms),
      digestIntervalMs: ms(raw.outbound.digest_interval),
      connectTimeoutMs: ms(raw.outbound.connect_timeout),
      commandTimeoutMs: ms(raw.outbound.command_timeout),
      leaseTimeMs: ms(raw.outbound.lease_time),
      blockedExtensions: raw.outbound.blocked_extensions.map((e) => e.toLowerCase()),
      trackingLinkTtlMs: ms(raw.outbound.tracking_link_ttl),
      requireTls: raw.outbound.require_tls.map((d) => d.toLowerCase()),
      mtaSts: raw.outbound.mta_sts,
      mtaStsPort: raw.outbound.mta_sts_port,
      tlsCaFile: raw.outbound.tls_ca_file,
      webhookEndpointsMax: raw.outbound.webhook_endpoints_max,
      dnsblZones: raw.outbound.dnsbl_zones.map((z) => z.toLowerCase().replace(/\.$/, "")),
      avoidListedIps: raw.outbound.avoid_listed_ips,
      complaintRateWarning: raw.outbound.complaint_rate_warning,
    },
    dashboard: {
      enabled: raw.dashboard.enabled,
      sessionLifetimeMs: ms(raw.dashboard.session_lifetime),
      sessionIdleMs: ms(raw.dashboard.session_idle),
      signInRate: rate(raw.dashboard.sign_in_rate),
      rateLimit: rate(raw.dashboard.rate_limit),
      adminTokenHashes: raw.dashboard.admin_tokens,
    },
    webhooks: {
      timeoutMs: ms(raw.webhooks.timeout),
      leaseMs: ms(raw.webhooks.lease_time),
      retryDelaysMs: raw.webhooks.retry_delays.map(ms),
      maxAgeMs: ms(raw.webhooks.max_age),
      batchSize: raw.webhooks.batch_size,
      allowPrivate: raw.webhooks.allow_private,
    },
    domains: {
      recheckUnverifiedMs: ms(raw.domains.recheck_unverified),
      recheckVerifiedMs: ms(raw.domains.recheck_verified),
      graceMs: ms(raw.domains.grace_period),
    },
    retention: {
      keepMs: {
        incoming_statuses: keepMs(raw.retention.incoming_statuses),
        messages: keepMs(raw.retention.messages),
        bodies: keepMs(raw.retention.bodies),
        events: keepMs(raw.retention.events),
        webhook_outbox: keepMs(raw.retention.webhook_outbox),
        domain_events: keepMs(raw.retention.domain_events),
        mta_sts_policies: keepMs(raw.retention.mta_sts_policies),
        stats: keepMs(raw.retention.stats),
        idempotency_keys: keepMs(raw.retention.idempotency_keys),
        webhook_posts: keepMs(raw.retention.webhook_posts),
      },
      intervalMs: ms(raw.retention.interval),
      batchSize: raw.retention.batch_size,
      batchPauseMs: ms(raw.retention.batch_pause),
    },
    dns: { servers: raw.dns.servers },
    tls: {
      mode: raw.tls.mode,
      certFile: raw.tls.cert_file,
      keyFile: raw.tls.key_file,
      checkIntervalMs: ms(raw.tls.check_interval),
      renewBeforeMs: ms(raw.tls.renew_before),
      expiryWarningMs: ms(raw.tls.expiry_warning),
      acme: {
        directoryUrl: raw.tls.acme.directory_url,
        email: raw.tls.acme.email,
        domains: raw.tls.acme.domains,
        challengeListen: listenOrOff(raw.tls.acme.challenge_listen),
        caFile: raw.tls.acme.ca_file,
        keyType: raw.tls.acme.key_type,
        failureBackoffMs: ms(raw.tls.acme.failure_backoff),
      },
    },
    accounts: raw.accounts.map((a) => ({
      id: a.id,
      name: a.name,
      apiTokenHashes: a.api_tokens,
      rateLimit: rate(a.rate_limit),
      testMode: a.test_mode,
      markdown: a.markdown,
      domainTargets: a.domain_targets,
      webhook: webhookOf(a.webhook),
      tracking: { opens: a.tracking.opens, clicks: a.tracking.clicks },
      unsubscribe: { url: a.unsubscribe.url || null, mailto: a.unsubscribe.mailto || null },
      outbound: a.outbound.map((o) => ({
        id: o.id,
        apiKeyHashes: o.api_keys,
        sendRateLimit: rate(o.send_rate_limit),
        testMode: o.test_mode || a.test_mode,
        webhook: webhookOf(o.webhook),
        ipPool: o.ip_pool === "" ? null : o.ip_pool,
      })),
    })),
  };
}
