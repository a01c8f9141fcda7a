// The deliverability feature: every sending IP's PTR, FCrDNS and blocklist listings,
// checked at start and hourly (once per cluster) and kept in the store, and the complaint
// rate of every outbound account. It serves /healthz's warnings, /metrics, the operator
// API and the dashboard; the pool picker (src/outbound/delivery/source-address.ts) skips listedIps().
import type { AccountRegistry } from "../auth/accounts.ts";
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Feature } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import type { StatsRepo } from "../stats/stats.port.ts";
import { type ComplaintRate, complaintRates, complaintWindowStartMs } from "./complaints.ts";
import type { SendingIpHealthRepo } from "./sending-ip-health.port.ts";
import { SendingHealth } from "./sending-health.ts";
import { sendingIpsOf } from "./sending-ip.ts";

/** What a check depends on, as one string: the sending addresses with their names, and the zones asked. */
const sendingHealthInputs = (config: Config): string => JSON.stringify([sendingIpsOf(config), config.outbound.dnsblZones]);

export interface DeliverabilityDeps {
  config(): Config;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  registry: AccountRegistry;
  repos: { sendingIpHealth: SendingIpHealthRepo; stats: Pick<StatsRepo, "outboundAccountCounts"> };
}

export interface DeliverabilityFeature extends Feature<Config> {
  sending: SendingHealth;
  /** The complaint rate of these outbound accounts (default: every one) over the last 24 hours. */
  complaintRates(outboundIds?: readonly string[]): Promise<ComplaintRate[]>;
}

export function deliverabilityFeature(deps: DeliverabilityDeps): DeliverabilityFeature {
  const logger = deps.logger.child({ component: "deliverability" });
  const sending = new SendingHealth({ ...deps, logger, repo: deps.repos.sendingIpHealth });
  const allOutboundIds = () => deps.registry.all().flatMap((a) => a.outbound.map((o) => o.id));
  const recheckInBackground = () => void sending.recheck().catch((err) => logger.error("the sending IPs could not be checked", { err }));
  return {
    sending,
    async complaintRates(outboundIds = allOutboundIds()) {
      return complaintRates(await deps.repos.stats.outboundAccountCounts(outboundIds, complaintWindowStartMs(deps.clock.nowMs())));
    },
    // The check at start runs in the background: a blocklist that does not answer must not hold the listeners back.
    start() {
      void sending
        .reread()
        .then(() => sending.check())
        .catch((err) => logger.error("the sending IPs could not be checked", { err }));
    },
    stop: () => sending.stop(),
    // A new sending address or blocklist zone is checked now, not at the next hour: the pool
    // picker skips listed addresses, and /healthz should not vouch for one nobody looked at.
    reloaded(previous, next) {
      if (sendingHealthInputs(previous) !== sendingHealthInputs(next)) recheckInBackground();
    },
    jobs: [{ name: "check-sending-ips", every: "0 0 * * * *", run: () => sending.check(), oncePerCluster: true }],
  };
}
