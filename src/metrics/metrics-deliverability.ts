// The deliverability metrics: each sending IP's blocklist listings and forward-confirmed
// reverse DNS at its last check, and each outbound account's complaint rate over the last
// 24 hours. Read from the store when scraped (src/deliverability/), so every node answers
// the same. A check that could not be made leaves its series out rather than report 0.
import { Gauge, type Registry } from "prom-client";
import type { ComplaintRate } from "../deliverability/complaints.ts";
import type { SendingIpHealth } from "../deliverability/sending-ip.ts";

/** What the deliverability gauges read when scraped (a part of MetricsDeps). */
export interface DeliverabilityGauges {
  deliverability: {
    sendingIps(): Promise<SendingIpHealth[]>;
    /** The zones checked (outbound.dnsbl_zones): a zone neither listing nor unknown is a 0. */
    zones(): readonly string[];
    complaintRates(): Promise<ComplaintRate[]>;
  };
}

export function deliverabilityMetrics(registers: Registry[], deps: DeliverabilityGauges): void {
  new Gauge({
    name: "postroom_sending_ip_listed",
    help: "1 when the sending IP is listed on the blocklist zone at the last check (outbound.dnsbl_zones), 0 when not; absent when the zone could not be asked",
    labelNames: ["ip", "zone"] as const,
    registers,
    async collect() {
      this.reset();
      for (const h of await deps.deliverability.sendingIps()) {
        const unknown = new Set(h.unknown.map((u) => u.check));
        const listed = new Set(h.listed.map((l) => l.zone));
        for (const zone of new Set([...listed, ...deps.deliverability.zones()])) {
          if (listed.has(zone)) this.set({ ip: h.ip, zone }, 1);
          else if (!unknown.has(zone)) this.set({ ip: h.ip, zone }, 0);
        }
      }
    },
  });
  new Gauge({
    name: "postroom_sending_ip_fcrdns",
    help: "1 when the sending IP's PTR name resolves back to it at the last check, 0 when not (or no PTR); absent when it could not be checked",
    labelNames: ["ip"] as const,
    registers,
    async collect() {
      this.reset();
      for (const h of await deps.deliverability.sendingIps()) if (h.fcrdns !== null) this.set({ ip: h.ip }, h.fcrdns ? 1 : 0);
    },
  });
  new Gauge({
    name: "postroom_outbound_complaint_rate",
    help: "Spam complaints (ARF reports) per delivered message of the outbound account over the last 24 hours; Gmail and Yahoo refuse bulk senders above 0.003",
    labelNames: ["outbound_account_id"] as const,
    registers,
    async collect() {
      this.reset();
      for (const r of await deps.deliverability.complaintRates()) this.set({ outbound_account_id: r.outboundId }, r.rate);
    },
  });
}
