// Every repository the appliance uses, built by the features' own factories on one engine
// (src/store/engine/): most from the engine's Db alike, the few whose mechanics differ by
// engine from SQLite's store (sqlite.ts) or PostgreSQL's pool (postgres.ts). The App takes
// them through their ports only; which engine answers is decided once, by store.url (open.ts).
import type { SessionRepo } from "../dashboard/sessions.port.ts";
import type { SendingIpHealthRepo } from "../deliverability/sending-ip-health.port.ts";
import type { SendingDomainCaches, SendingDomainRepo } from "../domains/sending-domains.port.ts";
import type { OutboxRepo } from "../events/outbox.port.ts";
import type { WebhookPostRepo } from "../events/webhook-posts.port.ts";
import type { WebhookEndpointRepo } from "../events/webhook-endpoints.port.ts";
import type { AddressRepo } from "../inbound/addresses/addresses.port.ts";
import type { CustomDomainRepo } from "../inbound/addresses/custom-domains.port.ts";
import type { StatusRepo } from "../inbound/statuses/statuses.port.ts";
import type { LocalAttachments } from "../inbound/attachments/local-attachments.port.ts";
import type { JobLeaseRepo } from "../jobs/job-lease.port.ts";
import type { InboundQueueRepo } from "../inbound/queue/inbound-queue.port.ts";
import type { RetentionTable } from "../jobs/retention.ts";
import type { Purge } from "../store/purge-window.ts";
import type { Clock } from "../lib/clock.ts";
import type { SecretBox } from "../lib/secret-key.ts";
import type { RateLimits } from "../auth/rate-limit.ts";
import type { StsStore } from "../outbound/delivery/mta-sts.port.ts";
import type { WarmupCounts } from "../outbound/delivery/warmup.port.ts";
import type { OutboundRepo } from "../outbound/queue/queue.port.ts";
import type { QueueControlRepo } from "../outbound/queue/queue-control.port.ts";
import type { DestinationRepo } from "../outbound/destinations/destinations.port.ts";
import type { IdempotencyRepo } from "../outbound/sending/idempotency.port.ts";
import type { SuppressionRepo } from "../outbound/suppressions/suppressions.port.ts";
import type { StatsRepo } from "../stats/stats.port.ts";
import type { TlsStore } from "../tls/tls-store.port.ts";
import type { EngineKind } from "../store/engine/engine.ts";
import type { TenantRepo } from "../auth/tenants.port.ts";
import type { AuditRepo } from "../auth/audit.port.ts";

export interface LocalAttachmentOptions {
  /** data_dir/keys/url-signing.key. */
  key: Buffer;
  publicUrl(): string;
  /** Rows the purge deletes per statement (retention.batch_size), where they are rows. */
  purgeBatchRows(): number;
}

export interface Repos {
  readonly engine: EngineKind;
  /** Encrypts the secrets the repositories keep (data_dir/keys/secrets.key, the same on every node). */
  readonly secrets: SecretBox;
  addresses: AddressRepo;
  customDomains: CustomDomainRepo;
  statuses: StatusRepo;
  outbound: OutboundRepo;
  /** The operator's queue: lists by destination, hold, release, retry, cancel, redeliver. */
  queueControl: QueueControlRepo;
  suppressions: SuppressionRepo;
  sendingDomains: SendingDomainRepo;
  outbox: OutboxRepo;
  webhookPosts: WebhookPostRepo;
  /** Webhook endpoints made through the account API (their tokens and secrets sealed with `secrets`). */
  webhookEndpoints: WebhookEndpointRepo;
  tls: TlsStore;
  stats: StatsRepo;
  /** The sending IPs' last health check (src/deliverability/). */
  sendingIpHealth: SendingIpHealthRepo;
  sessions: SessionRepo;
  idempotency: IdempotencyRepo;
  mtaSts: StsStore;
  /** Warm-up caps of sending addresses, counted per destination and day (shared by the nodes). */
  warmup: WarmupCounts;
  jobLeases: JobLeaseRepo;
  /** Accounts made through the operator API, their tokens, outbound accounts and keys. */
  tenants: TenantRepo;
  /** The operator audit log (written with each change of `tenants`). */
  audit: AuditRepo;
  /** (beyond) Received mail waiting for a target that failed (on_target_failure = "queue"). */
  inboundQueue: InboundQueueRepo;
  /** Paused destinations (shared by the nodes) and each recipient's destination (issue 29). */
  destinations: DestinationRepo;
  /** The retention purge's windows, one Purge per table, and what to close after the last. */
  retention: { purges: Record<RetentionTable, Purge>; close(): Promise<void> };
  /**
   * Where rate limits count: `calls` for accounts' API calls and sends, `dashboard` for
   * sign-ins and sessions (undefined: the dashboard's own bounded memory). SQLite: this
   * process's memory, exact; PostgreSQL: the database, shared by the nodes (docs/api.md).
   */
  rateLimits: { calls: RateLimits; dashboard: RateLimits | undefined };
  /** Makes the sending-domain caches forget what another node changed (nothing to hear on SQLite). */
  followSendingDomains(caches: SendingDomainCaches): Promise<void>;
  /** Calls `onChange` when another node changed the stored accounts (PostgreSQL; nothing to hear on SQLite). */
  followTenants(onChange: () => void): Promise<void>;
  /** Where {"store": "local"} attachments and kept messages live, behind URLs signed with `key`. */
  localAttachments(opts: LocalAttachmentOptions): LocalAttachments;
  /** Throws unless the store took a durable write lately (for /healthz). */
  checkWritable(nowMs: number): void;
  close(): Promise<void>;
}

/** What the repositories call back into the running appliance. */
export interface RepoHooks {
  clock: Clock;
  /** Message events were recorded: the webhook dispatcher looks for work. */
  onEvents(): void;
  /** Incoming statuses could not be stored yet (SQLite keeps them journaled and tries again). */
  onStatusStoreFailed(err: unknown): void;
}
