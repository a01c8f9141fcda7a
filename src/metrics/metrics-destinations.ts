// Per destination and source IP (issue 29): connections opened, deliveries and deferrals,
// and the destinations paused now. Labels stay bounded: a destination is a rule's name, or
// the key of a domain's MX host set; past MAX_DESTINATION_LABELS distinct ones, "other".
import { Counter, Gauge, type Registry } from "prom-client";
import type { DestinationRepo } from "../outbound/destinations/destinations.port.ts";
import type { DestinationCounters } from "../outbound/delivery/worker-deps.ts";

/** Destination label values kept apart at most; later ones count as "other". */
export const MAX_DESTINATION_LABELS = 200;
/** Source IP label values kept apart at most (a host has few addresses). */
const MAX_SOURCE_LABELS = 64;

/** Pure: the label for `value`, remembered in `seen` while it has room, else "other". */
export function boundedLabel(seen: Set<string>, value: string, max: number): string {
  if (seen.has(value)) return value;
  if (seen.size >= max) return "other";
  seen.add(value);
  return value;
}

export function destinationMetrics(
  registers: Registry[],
  pauses: Pick<DestinationRepo, "listPauses">,
  nowMs: () => number,
): DestinationCounters {
  const destinations = new Set<string>();
  const sources = new Set<string>();
  const labels = (destination: string, sourceIp: string) => ({
    destination: boundedLabel(destinations, destination, MAX_DESTINATION_LABELS),
    source_ip: boundedLabel(sources, sourceIp, MAX_SOURCE_LABELS),
  });
  const connections = new Counter({
    name: "postroom_destination_connections_total",
    help: "Connections opened to each destination (a [[outbound.destinations]] rule, or an MX host set) from each source IP",
    labelNames: ["destination", "source_ip"] as const,
    registers,
  });
  const attempts = new Counter({
    name: "postroom_destination_attempts_total",
    help: "Transactions with each destination from each source IP by result: delivery (accepted) or deferral (a 4xx, a throttle reply, no reply)",
    labelNames: ["destination", "source_ip", "result"] as const,
    registers,
  });
  new Gauge({
    name: "postroom_destination_paused",
    help: "1 for each destination paused now (on every node and source IP), by source: throttle (a throttle reply) or operator",
    labelNames: ["destination", "source"] as const,
    registers,
    async collect() {
      this.reset();
      const now = nowMs();
      for (const p of await pauses.listPauses())
        if (p.untilMs === null || p.untilMs > now)
          this.set({ destination: boundedLabel(destinations, p.destination, MAX_DESTINATION_LABELS), source: p.source }, 1);
    },
  });
  return {
    connection: (destination, sourceIp) => connections.inc(labels(destination, sourceIp)),
    attempt: (destination, sourceIp, result) => attempts.inc({ ...labels(destination, sourceIp), result }),
  };
}
