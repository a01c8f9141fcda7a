// The sending-domains feature: the service that verifies domains and signs with their keys,
// the view of it outbound mail reads (SenderDomains), and the hourly check of due domains.
// It follows every write to a domain, on every node, from when it starts.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Feature } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import type { SenderDomains } from "../outbound/sending/sender-domains.ts";
import { senderDomains } from "./sender-domains.ts";
import type { SendingDomainCaches, SendingDomainRepo } from "./sending-domains.port.ts";
import { DomainService } from "./service.ts";

export interface DomainsFeatureDeps {
  repo: SendingDomainRepo;
  /** Tells `caches` of each write to a domain on any node (Repos.followSendingDomains). */
  follow(caches: SendingDomainCaches): Promise<void>;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  config(): Config;
  /** The key that encrypts DKIM private keys at rest. */
  encryptionKey: Buffer;
}

export interface DomainsFeature extends Feature {
  service: DomainService;
  senders: SenderDomains;
}

export function domainsFeature(deps: DomainsFeatureDeps): DomainsFeature {
  const { repo, resolver, clock, config, encryptionKey } = deps;
  const service = new DomainService({ repo, resolver, clock, config, encryptionKey, logger: deps.logger.child({ component: "domains" }) });
  return {
    service,
    senders: senderDomains(service),
    start: () => deps.follow(service),
    stop: () => service.close(),
    jobs: [{ name: "verify-sending-domains", every: "0 * * * * *", run: () => service.verifyDue(), oncePerCluster: true }],
  };
}
