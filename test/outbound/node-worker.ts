// A delivery worker as one node of a cluster runs it, for the tests of two workers on one
// queue (delivery-nodes, delivery-heartbeat): the real worker on the given repository,
// resolving MX through the test DNS server, with the message as queued (no signing).
import type { Config } from "../../src/config/config.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import type { WorkerDeps } from "../../src/outbound/delivery/worker-deps.ts";
import { DeliveryWorker } from "../../src/outbound/delivery/worker.ts";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";

export const nodeWorker = (
  repo: OutboundRepo,
  nodeId: string,
  config: () => Config,
  dnsAddress: string,
  deps: Partial<WorkerDeps> = {},
): DeliveryWorker =>
  new DeliveryWorker({
    repo,
    nodeId,
    config,
    clock: { nowMs: () => Date.now() },
    logger: silentLogger,
    resolver: createResolver({ servers: [dnsAddress], timeoutMs: 1000 }),
    prepare: async (_m, _id, _to, raw) => raw,
    samePerRecipient: () => true,
    ...deps,
  });
