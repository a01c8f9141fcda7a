// The validated config as the rest of the program sees it: camelCase, with every
// duration in ms, every size in bytes and every listen address parsed.
import type { DestinationRule } from "./destinations.ts";
import type { LogLevel } from "../lib/logger.ts";
import type { Share } from "../lib/memory-shares.ts";
import type { ListenAddress, RateLimit } from "./units.ts";

/** Failed SMTP AUTH attempts per client, as smtp/auth-failures.ts applies them. */
export interface AuthFailureLimits {
  failuresBeforeDelay: number;
  delayMs: number;
  maxDelayMs: number;
  failuresBeforeClose: number;
  windowMs: number;
  trackedClients: number;
}

export interface WebhookConfig {
  url: string;
  token: string;
  signingSecret: string | null;
}

export interface OutboundAccountConfig {
  id: string;
  apiKeyHashes: string[];
  sendRateLimit: RateLimit | null;
  testMode: boolean;
  /** Its own webhook, or null to use the account's. */
  webhook: WebhookConfig | null;
  /** The name of the [[outbound.ip_pools]] its mail leaves from; null = the system's default address. */
  ipPool?: string | null;
}

/** A warm-up: the cap of day N (UTC days from `startMs`) is daily[N]; no cap after the list. */
export interface WarmupSchedule {
  /** Midnight UTC of the first day. */
  startMs: number;
  daily: number[];
}

/** One sending address of a pool: connections bind to `ip` and greet with `helo`. */
export interface SourceAddress {
  ip: string;
  helo: string;
  warmup: WarmupSchedule | null;
}

export interface IpPoolConfig {
  name: string;
  addresses: SourceAddress[];
}

export interface AccountConfig {
  id: string;
  name: string;
  apiTokenHashes: string[];
  rateLimit: RateLimit | null;
  testMode: boolean;
  markdown: boolean;
  domainTargets: boolean;
  webhook: WebhookConfig | null;
  tracking: { opens: boolean; clicks: boolean };
  unsubscribe: { url: string | null; mailto: string | null };
  outbound: OutboundAccountConfig[];
}

export interface Config {
  hostname: string;
  dataDir: string;
  /** postgresUrl null: the embedded SQLite in dataDir. The URL holds a password: never log it. */
  store: { postgresUrl: string | null; connectTimeoutMs: number; maxConnections: number };
  /** nodeId: cluster.node_id, or the machine's hostname when it is "". */
  /** jobLeaseMs: cluster.job_lease_time. */
  cluster: { nodeId: string; jobLeaseMs: number };
  log: { level: LogLevel; flushIntervalMs: number };
  http: {
    listen: ListenAddress | null;
    publicUrl: string;
    maxBodyBytes: number;
    maxJsonDepth: number;
    /** Records one search request reads at most (http.search_window). */
    searchWindowRows: number;
    /** Most terms in one search query (http.search_max_terms). */
    searchMaxTerms: number;
    /** Longest a search may run, its wait for the search thread included (http.search_timeout). */
    searchTimeoutMs: number;
    /** Serve the API over HTTPS with the [tls] certificate. */
    tls: boolean;
    /** sha256 hash of the /metrics token; null = /metrics off. */
    metricsTokenHash: string | null;
    /** Addresses and CIDR ranges whose X-Forwarded-For / Forwarded name the client (http/client-address.ts). */
    trustedProxies: string[];
  };
  smtp: {
    inboundListen: ListenAddress | null;
    submissionListen: ListenAddress | null;
    submissionTlsListen: ListenAddress | null;
    maxMessageSizeBytes: number;
    allowInsecureAuth: boolean;
    maxRecipients: number;
    maxUnknownRecipients: number;
    maxHeaderBytes: number;
    maxMimeDepth: number;
    maxMimeParts: number;
    maxConnections: number;
    socketTimeoutMs: number;
    maxConnectionsPerIp: number;
    maxJunkCommands: number;
    maxSessionMs: number;
    /** Bytes per second during DATA; 0 = no minimum. */
    minDataRate: number;
    dataRateWindowMs: number;
    authTimeoutMs: number;
    /** Failed submission AUTH attempts per client: when they are slowed, then refused (smtp/auth-failures.ts). */
    authFailures: AuthFailureLimits;
  };
  limits: {
    /** The memory budget for mail in flight (src/lib/memory-budget.ts). */
    mailInFlightBytes: number;
    /** The most one stranger (an address, an IPv6 /64) may hold of it. */
    mailInFlightPerClient: Share;
    /** The part strangers (unauthenticated inbound) can never take. */
    mailInFlightReserved: Share;
    mailInFlightIdleMs: number;
    mailInFlightMaxWaitMs: number;
  };
  inbound: {
    domain: string;
    targetTimeoutMs: number;
    allowPrivateTargets: boolean;
    maxRedirects: number;
    targetResponseMaxBytes: number;
    attachmentUrlTtlMs: number;
    /** Incoming statuses held to be written again (src/inbound/statuses/status-retry.ts). */
    statusRetryRows: number;
    parseWorkers: number;
    /** Waits between POSTs of a kept message (on_target_failure = "queue"), in turn; the last repeats. */
    retryDelaysMs: number[];
    /** How long a kept message is posted again before it expires. */
    maxQueueTimeMs: number;
    /** Bytes of kept messages an account may have waiting; beyond, its mail is deferred. */
    maxQueuedBytesPerAccount: number;
    /** spamd to score received mail with, or null (off). */
    spamd: { at: ListenAddress; timeoutMs: number; maxBytes: number } | null;
  };
  outbound: {
    bounceHost: string;
    /** outbound.sending_ips and every address of outbound.ip_pools, once each: the addresses SPF must authorise. */
    sendingIps: string[];
    ipPools: IpPoolConfig[];
    smarthost: string | null;
    mxPort: number;
    allowPrivateMx: boolean;
    maxQueueTimeMs: number;
    /** outbound.suppression_ttl: how long a hard bounce suppresses its address. */
    suppressionTtlMs: number;
    maxRecipients: number;
    maxSizeBytes: number;
    /** outbound.max_send_ahead: the latest send_at E11 takes, from now. */
    maxSendAheadMs: number;
    /** outbound.batch_max_messages: messages in one POST /messages/batch. */
    batchMaxMessages: number;
    concurrency: number;
    domainConcurrency: number;
    initialDomainConcurrency: number;
    /** [[outbound.destinations]] as the file gives them (the built-in rules are added where they are used). */
    destinations: DestinationRule[];
    /** Servers whose last TLS session is kept for resumption; 0 = off. */
    tlsSessionCache: number;
    retryDelaysMs: number[];
    digestIntervalMs: number;
    connectTimeoutMs: number;
    commandTimeoutMs: number;
    leaseTimeMs: number;
    blockedExtensions: string[];
    /** How long a click-tracking link redirects after its message was accepted. */
    trackingLinkTtlMs: number;
    /** Recipient domains never delivered to in clear ("example.com", or ".example.com" for its subdomains). */
    requireTls: string[];
    mtaSts: boolean;
    mtaStsPort: number;
    /** Extra CA bundle (path) for MX certificates and MTA-STS policy hosts; "" = none. */
    tlsCaFile: string;
    /** Webhook endpoints an outbound account may have through the API. */
    webhookEndpointsMax: number;
    /** DNS blocklist zones every sending IP is checked on (outbound.dnsbl_zones), lower case, no final dot. */
    dnsblZones: string[];
    /** A pool opens no new connection from a listed address while it has others (outbound.avoid_listed_ips). */
    avoidListedIps: boolean;
    /** Complaints per delivered message over 24 h above which /healthz warns (outbound.complaint_rate_warning). */
    complaintRateWarning: number;
  };
  domains: { recheckUnverifiedMs: number; recheckVerifiedMs: number; graceMs: number };
  retention: {
    /** How long the rows of each table are kept, by its key in [retention]; null: forever ("off"). */
    keepMs: {
      incoming_statuses: number | null;
      messages: number | null;
      bodies: number | null;
      events: number | null;
      webhook_outbox: number | null;
      domain_events: number | null;
      mta_sts_policies: number | null;
      stats: number | null;
      idempotency_keys: number | null;
      webhook_posts: number | null;
    };
    intervalMs: number;
    batchSize: number;
    batchPauseMs: number;
  };
  dashboard: {
    enabled: boolean;
    sessionLifetimeMs: number;
    sessionIdleMs: number;
    signInRate: RateLimit | null;
    rateLimit: RateLimit | null;
    /** Hashes of the operator tokens of the admin view. */
    adminTokenHashes: string[];
  };
  webhooks: {
    timeoutMs: number;
    /** How long a claimed batch is this node's to post (OutboxLease); longer than timeoutMs. */
    leaseMs: number;
    retryDelaysMs: number[];
    maxAgeMs: number;
    batchSize: number;
    allowPrivate: boolean;
  };
  dns: { servers: string[] };
  tls: {
    mode: "off" | "files" | "acme";
    certFile: string;
    keyFile: string;
    checkIntervalMs: number;
    renewBeforeMs: number;
    expiryWarningMs: number;
    acme: {
      directoryUrl: string;
      email: string;
      domains: string[];
      challengeListen: ListenAddress | null;
      caFile: string;
      keyType: "rsa" | "ecdsa";
      failureBackoffMs: number;
    };
  };
  accounts: AccountConfig[];
}
