// Which destination each recipient domain belongs to, as the delivery worker needs it before
// it plans connections: the domain's MX hosts (looked up, kept a minute) matched against the
// rules in force (the file's, then the built-in ones). Bounded: the domains seen last.
import type { Config } from "../../config/config.ts";
import type { DnsResolver } from "../../lib/dns.ts";
import { mxHostsFrom } from "../delivery/mx.ts";
import { BUILT_IN_DESTINATIONS } from "./builtin.ts";
import { type DestinationRule, effectiveRules, type ResolvedDestination, resolveDestination } from "./rules.ts";

/** How long a domain's MX hosts (and so its destination) are kept before they are looked up again. */
export const DESTINATION_TTL_MS = 60_000;
/** Domains kept at most; the oldest are forgotten first. */
export const MAX_DOMAINS = 10_000;

interface Entry {
  resolved: ResolvedDestination;
  expiresAtMs: number;
  /** The smarthost it was resolved under (every domain is the relay's while there is one). */
  smarthost: string | null;
}

export class DestinationDirectory {
  private readonly entries = new Map<string, Entry>();
  private rulesFor: readonly DestinationRule[] | null = null;
  private rules: DestinationRule[] = [];

  constructor(
    private readonly resolver: DnsResolver,
    private readonly config: () => Config,
    /** The smarthost's window key for a relay URL (every domain shares it). */
    private readonly relayKey: (smarthost: string) => string,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** The rules in force: the file's, then the built-in ones it does not replace (recomputed after a reload). */
  currentRules(): DestinationRule[] {
    const file = this.config().outbound.destinations;
    if (this.rulesFor !== file) {
      this.rules = effectiveRules(file, BUILT_IN_DESTINATIONS);
      // A reload changed the rules: every domain is resolved again under them.
      if (this.rulesFor !== null) this.entries.clear();
      this.rulesFor = file;
    }
    return this.rules;
  }

  /** What `domain` resolved to last, if it is still kept. */
  known(domain: string): ResolvedDestination | undefined {
    return this.entries.get(domain)?.resolved;
  }

  /** Domains known to belong to a destination for which `test` holds (at most `limit`). */
  domainsWhere(test: (r: ResolvedDestination) => boolean, limit: number): string[] {
    const out: string[] = [];
    for (const [domain, e] of this.entries) {
      if (out.length >= limit) break;
      if (test(e.resolved)) out.push(domain);
    }
    return out;
  }

  async resolve(domain: string): Promise<ResolvedDestination> {
    const d = domain.toLowerCase();
    const now = this.nowMs();
    const rules = this.currentRules();
    const smarthost = this.config().outbound.smarthost;
    const kept = this.entries.get(d);
    if (kept && kept.expiresAtMs > now && kept.smarthost === smarthost) return kept.resolved;
    let resolved: ResolvedDestination;
    if (smarthost) resolved = { name: d, windowKey: this.relayKey(smarthost), rule: null };
    else resolved = resolveDestination(d, await this.mxHosts(d), rules);
    this.entries.delete(d);
    this.entries.set(d, { resolved, expiresAtMs: now + DESTINATION_TTL_MS, smarthost });
    if (this.entries.size > MAX_DOMAINS) this.entries.delete(this.entries.keys().next().value!);
    return resolved;
  }

  /** The domain's MX hosts; null when they cannot be known now (the attempt itself will say why). */
  private async mxHosts(domain: string): Promise<string[] | null> {
    try {
      const hosts = mxHostsFrom(await this.resolver.resolveMx(domain));
      return hosts === "null" ? null : hosts;
    } catch {
      return null;
    }
  }
}
