// Builds the delivery worker's view of a destination's TLS needs from the config and the
// MTA-STS cache. MTA-STS speaks about a domain's own MX hosts, so it is not applied when
// a smarthost relays everything; require_tls still keeps our hop to the smarthost encrypted.
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { Config } from "../../config/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Clock } from "../../lib/clock.ts";
import type { DnsResolver } from "../../lib/dns.ts";
import type { StsStore } from "./mta-sts.port.ts";
import { MtaSts } from "./mta-sts.ts";
import { tlsRequirement, type TlsRequirement } from "./tls-policy.ts";

/** How the worker must deliver to a destination domain. */
export interface DestinationTls {
  requirement: TlsRequirement;
  /** Roots to verify certificates against (public plus outbound.tls_ca_file), when verifying. */
  ca?: string[];
}

/**
 * The roots certificates are verified against: the runtime's public ones, plus
 * outbound.tls_ca_file when set (read once per path). Undefined means the defaults.
 */
export function trustedRoots(logger: Logger): (path: string) => string[] | undefined {
  let cached: { path: string; roots: string[] | undefined } | null = null;
  return (path) => {
    if (path === "") return undefined;
    if (cached?.path === path) return cached.roots;
    let roots: string[] | undefined;
    try {
      roots = [...rootCertificates, readFileSync(path, "utf8")];
    } catch (err) {
      logger.error("outbound.tls_ca_file cannot be read; verifying against the public roots only", { path, err });
    }
    cached = { path, roots };
    return roots;
  };
}

/** The worker's tlsFor, with its MTA-STS cache in the store. */
export function outboundTls(deps: {
  store: StsStore;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  config(): Config;
}): (domain: string) => Promise<DestinationTls> {
  const roots = trustedRoots(deps.logger);
  const mtaSts = new MtaSts({
    resolver: deps.resolver,
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    settings: () => {
      const { outbound } = deps.config();
      return {
        fetchTimeoutMs: outbound.connectTimeoutMs,
        port: outbound.mtaStsPort,
        allowPrivate: outbound.allowPrivateMx,
        ca: roots(outbound.tlsCaFile),
      };
    },
  });
  return destinationTls({ config: deps.config, mtaSts, roots });
}

export function destinationTls(deps: {
  config(): Config;
  mtaSts: MtaSts;
  roots: (path: string) => string[] | undefined;
}): (domain: string) => Promise<DestinationTls> {
  const roots = deps.roots;
  return async (domain) => {
    const { outbound } = deps.config();
    const policy = outbound.mtaSts && !outbound.smarthost ? await deps.mtaSts.policyFor(domain) : null;
    const requirement = tlsRequirement(domain, outbound.requireTls, policy);
    return requirement.level === "verify" ? { requirement, ca: roots(outbound.tlsCaFile) } : { requirement };
  };
}
