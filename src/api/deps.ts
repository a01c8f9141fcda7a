// Everything the API's routes need, passed in when the router is built (nothing is global).
// No route module takes it whole: each picks what it uses (e.g. AddressRouteDeps).
import type { AccountRegistry } from "../auth/accounts.ts";
import type { AuditRepo } from "../auth/audit.port.ts";
import type { TenantAdmin } from "../auth/tenant-admin.ts";
import type { Config } from "../config/config.ts";
import type { AddressRepo } from "../inbound/addresses/addresses.port.ts";
import type { LocalAttachments } from "../inbound/attachments/local-attachments.port.ts";
import type { CustomDomainRepo } from "../inbound/addresses/custom-domains.port.ts";
import type { StatusRepo } from "../inbound/statuses/statuses.port.ts";
import type { SendingDomainRepo } from "../domains/sending-domains.port.ts";
import type { DomainService } from "../domains/service.ts";
import type { DeliverabilityFeature } from "../deliverability/feature.ts";
import type { OutboundRepo } from "../outbound/queue/queue.port.ts";
import type { QueueControlRepo } from "../outbound/queue/queue-control.port.ts";
import type { DestinationRepo } from "../outbound/destinations/destinations.port.ts";
import type { SuppressionRepo } from "../outbound/suppressions/suppressions.port.ts";
import type { InboundQueueRepo } from "../inbound/queue/inbound-queue.port.ts";
import type { SendDeps } from "../outbound/sending/send.ts";
import type { Clock } from "../lib/clock.ts";
import type { DiskFullLog } from "../lib/disk-full.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Logger } from "../lib/logger.ts";
import type { MemoryBudget } from "../lib/memory-budget.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { StatsRepo } from "../stats/stats.port.ts";
import type { WebhookDispatcher } from "../events/dispatcher.ts";
import type { WebhookEndpointRepo } from "../events/webhook-endpoints.port.ts";
import type { TestPost } from "../inbound/test-post.ts";
import type { KeptMessages } from "../inbound/post-again.ts";

export interface HealthReport {
  ok: boolean;
  checks: Record<string, string>;
  /** Trouble ahead that does not fail the check yet (a certificate about to expire). */
  warnings: string[];
}

export interface ApiDeps {
  /** The current config; SIGHUP may replace it between two requests. */
  config(): Config;
  registry: AccountRegistry;
  clock: Clock;
  logger: Logger;
  resolver: DnsResolver;
  addresses: AddressRepo;
  customDomains: CustomDomainRepo;
  statuses: StatusRepo;
  localAttachments: LocalAttachments;
  outbound: OutboundRepo;
  /** The operator's queue: lists by destination and bulk actions (api/queue.ts). */
  queueControl: QueueControlRepo;
  send: SendDeps;
  sendingDomains: SendingDomainRepo;
  domains: DomainService;
  suppressions: SuppressionRepo;
  /** (beyond) Received mail waiting for its target (on_target_failure = "queue"). */
  inboundQueue: InboundQueueRepo;
  /** Signs tracking links (opens and clicks). */
  trackingKey: Buffer;
  health(): HealthReport;
  /** This node's name (cluster.node_id, or the hostname), as it was at start-up. */
  nodeId: string;
  metrics: Metrics;
  /** Where a full disk is reported (rate-limited). */
  diskFull: DiskFullLog;
  /** Memory held by mail in flight (limits.mail_in_flight): E11 reserves in it. */
  budget: MemoryBudget;
  /** Kept inbound messages (store_messages): read back, and post again. */
  kept: KeptMessages;
  /** The dashboard's "send a test POST" to an address's target. */
  testPost: TestPost;
  /** The webhook dispatcher: the webhook page's reads, test POST and retry now. */
  webhooks: WebhookDispatcher;
  /** Webhook endpoints made through the API (GET/POST/DELETE /webhooks). */
  webhookEndpoints: WebhookEndpointRepo;
  /** Hourly counts and the overview's reads (GET /stats). */
  stats: StatsRepo;
  /** Accounts made through the operator API: every change, audited (API.md section 10). */
  tenants: TenantAdmin;
  /** The operator audit log's reads. */
  audit: AuditRepo;
  /** The sending IPs' health (GET /operator/health/sending) and the complaint rates (the overview). */
  deliverability: Pick<DeliverabilityFeature, "sending" | "complaintRates">;
  /** Paused destinations (the operator's pause and resume) and each recipient's destination. */
  destinations: DestinationRepo;
}
