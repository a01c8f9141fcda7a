// The certificates feature: the manager that loads, orders and renews the certificate every
// listener uses, the ACME challenge answers, and the periodic check. Renewal (ACME) orders
// once per cluster; in files mode each node checks its own files; the renewed certificate
// reaches the others through the store, which each node reads back on its own.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Feature, Job } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import { ChallengeResponder } from "./challenges.ts";
import { TlsManager } from "./manager.ts";
import type { TlsStore } from "./tls-store.port.ts";

export interface TlsFeatureDeps {
  config(): Config;
  clock: Clock;
  resolver: DnsResolver;
  store: TlsStore;
  logger: Logger;
}

export interface TlsFeature extends Feature {
  manager: TlsManager;
  /** Answers the CA's HTTP-01 challenges (on the API's port and on tls.acme.challenge_listen). */
  responder: ChallengeResponder;
}

export function tlsFeature(deps: TlsFeatureDeps): TlsFeature {
  const responder = new ChallengeResponder(deps.store);
  const { config, clock, resolver, store } = deps;
  const manager = new TlsManager({ config, clock, resolver, store, responder, logger: deps.logger.child({ component: "tls" }) });
  const { mode, checkIntervalMs } = config().tls;
  const jobs: Job[] = [];
  if (mode !== "off")
    jobs.push({ name: "check-certificate", every: checkIntervalMs, run: () => manager.check(), oncePerCluster: mode === "acme" });
  if (mode === "acme") jobs.push({ name: "reload-certificate", every: checkIntervalMs, run: () => manager.reloadStored() });
  return { manager, responder, start: () => manager.start(), jobs };
}
