// What the delivery worker (worker.ts) is given: the attempt recorder's dependencies and
// what delivering needs, and what a message being delivered costs in memory.
import type { IpPoolConfig } from "../../config/config.ts";
import type { DnsResolver } from "../../lib/dns.ts";
import type { DestinationRepo } from "../destinations/destinations.port.ts";
import type { MemoryBudget, MessageCost } from "../../lib/memory-budget.ts";
import type { OutboundMessage } from "../queue/message.ts";
import type { RecorderDeps } from "./attempt-recorder.ts";
import type { DestinationTls } from "./destination-tls.ts";
import type { WarmupCounts } from "./warmup.port.ts";

/** The recorder's (repo, config, clock, logger, recorded) and what delivering needs. */
export interface WorkerDeps extends RecorderDeps {
  /** A recipient's copy as it goes out: personalised (tracking, unsubscribe) and DKIM-signed. */
  prepare(message: OutboundMessage, recipientId: string, recipient: string, raw: Buffer): Promise<Buffer>;
  /** Whether every recipient gets the same bytes (then one prepared copy serves all). */
  samePerRecipient(message: OutboundMessage): boolean;
  resolver: DnsResolver;
  /** Paused destinations (shared by the nodes) and the destination each recipient resolved to; this process's memory without it. */
  destinationRepo?: DestinationRepo;
  /** How a destination domain must be delivered to (require_tls, MTA-STS); opportunistic STARTTLS without it. */
  tlsFor?(domain: string): Promise<DestinationTls>;
  /**
   * Mail in flight (limits.mail_in_flight): a message's copy being delivered is held in it.
   * When it has no room, the recipient waits (lease given back, no attempt counted).
   */
  budget?: MemoryBudget;
  /** Warm-up caps of pool addresses, counted in the store (none: no cap is applied). */
  warmup?: WarmupCounts;
  /** What delivery counts per destination and source IP (/metrics); label: a rule's name or an MX set's key. */
  destinationMetrics?: DestinationCounters;
  /** The pool an outbound account sends from (config's and stored accounts'); config's accounts only without it (source-address.ts poolOf). */
  poolOf?(outboundAccountId: string): IpPoolConfig | null;
  /** Addresses on a blocklist now (the deliverability health check): a pool avoids them when outbound.avoid_listed_ips is set. */
  listedIps?(): ReadonlySet<string>;
  /** This node's name (cluster.node_id; config().cluster.nodeId when not given): its workers' IDs start with it. */
  nodeId?: string;
}

export interface DestinationCounters {
  /** A connection opened to the destination. */
  connection(destination: string, sourceIp: string): void;
  /** A transaction's result: delivered, or deferred (a 4xx, a throttle, no reply). */
  attempt(destination: string, sourceIp: string, result: "delivery" | "deferral"): void;
}

/**
 * What a message holds while it is delivered, as a multiple of its size (measured with
 * bench:memory, bench/RESULTS.md): its stored bytes, the copy a signing thread reads,
 * the signed copy, and what the SMTP client makes of it as it writes it.
 */
export const DELIVERY_MESSAGE_COST: MessageCost = { copies: 3, fixedBytes: 64 * 1024 };
