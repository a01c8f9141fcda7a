// MTA-STS (RFC 8461) discovery for recipient domains: the _mta-sts TXT record names the
// policy's id; the policy itself is fetched over HTTPS from mta-sts.<domain> (through the
// egress guard, certificate verified, no redirects, 64 KB at most) and parsed by mailauth.
// Policies are kept in the store until max_age so a restart cannot be used to strip them
// (section 5.1), and a policy that cannot be refreshed is applied from the cache.
import { parsePolicy, resolvePolicy } from "mailauth/lib/mta-sts.js";
import type { Clock } from "../../lib/clock.ts";
import type { DnsResolver } from "../../lib/dns.ts";
import { guardedFetch, readBodyPrefix } from "../../lib/egress-fetch.ts";
import type { Logger } from "../../lib/logger.ts";
import { TtlCache } from "../../lib/ttl-cache.ts";
import type { StsStore } from "./mta-sts.port.ts";
import type { StsPolicy } from "./tls-policy.ts";

export const MAX_POLICY_BYTES = 64 * 1024;
/** How long a failed fetch of one policy id is remembered before the policy host is asked again. */
const FAILED_FETCH_TTL_MS = 10 * 60_000;

export interface MtaStsDeps {
  resolver: DnsResolver;
  store: StsStore;
  clock: Clock;
  logger: Logger;
  /** `ca`: the roots to verify policy hosts against (default: the runtime's public roots). */
  settings(): { fetchTimeoutMs: number; port: number; allowPrivate: boolean; ca: string[] | undefined };
}

export class MtaSts {
  // Also shares one fetch among the deliveries that want the same policy at once.
  private readonly fetches = new TtlCache<StsPolicy>(FAILED_FETCH_TTL_MS, 10_000, () => true);

  constructor(private readonly deps: MtaStsDeps) {}

  /** The policy in force for `domain`, or null when it publishes none (or none could be had). */
  async policyFor(domain: string): Promise<StsPolicy | null> {
    const d = domain.toLowerCase();
    const nowMs = this.deps.clock.nowMs();
    const cached = await this.deps.store.get(d);
    const valid = cached && cached.expiresAtMs > nowMs ? cached : null;
    let id: string | false;
    try {
      id = await resolvePolicy(d, { resolver: (name: string, type: string) => this.deps.resolver.resolve(name, type) } as never);
    } catch (err) {
      this.deps.logger.warn("mta-sts discovery failed", { domain: d, err, using_cached: valid !== null });
      return valid;
    }
    if (!id) return valid;
    if (valid && valid.id === id) return valid;
    try {
      return await this.fetches.get(`${d} ${id}`, async () => {
        const policy = await this.fetchPolicy(d, id, nowMs);
        await this.deps.store.put(d, policy);
        this.deps.logger.info("mta-sts policy", { domain: d, id, mode: policy.mode, mx: policy.mx, max_age: policy.maxAgeSeconds });
        return policy;
      });
    } catch (err) {
      this.deps.logger.warn("mta-sts policy not fetched", { domain: d, id, reason: (err as Error).message, using_cached: valid !== null });
      return valid;
    }
  }

  private async fetchPolicy(domain: string, id: string, nowMs: number): Promise<StsPolicy> {
    const settings = this.deps.settings();
    const host = `mta-sts.${domain}`;
    const { response } = await guardedFetch(
      {
        url: `https://${host}${settings.port === 443 ? "" : `:${settings.port}`}/.well-known/mta-sts.txt`,
        method: "GET",
        headers: { accept: "text/plain" },
        // RFC 8461 3.3: redirects are not followed.
        maxRedirects: 0,
        signal: AbortSignal.timeout(settings.fetchTimeoutMs),
        tlsCa: settings.ca,
      },
      { resolver: this.deps.resolver, policy: { allowPrivate: settings.allowPrivate } },
    );
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`https://${host}/.well-known/mta-sts.txt answered ${response.status}`);
    }
    const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (mediaType !== "text/plain") throw new Error(`https://${host}/.well-known/mta-sts.txt is ${mediaType || "untyped"}, not text/plain`);
    const text = await readBodyPrefix(response, MAX_POLICY_BYTES + 1);
    if (text.length > MAX_POLICY_BYTES) throw new Error(`the policy of ${domain} is larger than ${MAX_POLICY_BYTES} bytes`);
    const parsed = parsePolicy(text) as { mode: StsPolicy["mode"]; mx?: string[]; maxAge: number };
    return { id, mode: parsed.mode, mx: parsed.mx ?? [], maxAgeSeconds: parsed.maxAge, expiresAtMs: nowMs + parsed.maxAge * 1000 };
  }
}
