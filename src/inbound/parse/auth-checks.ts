// SPF, DKIM and DMARC of a received message, through mailauth with our resolver (the
// servers of `dns.servers`), so the checks see the same DNS as everything else.
// Every check is RFC-exact (strict): the lenient default misses SPF syntax errors after
// the matching term and takes invalid macro expansions (7 cases of the RFC 7208 suite).
// SPF and DMARC verdicts depend only on their inputs and on DNS answers we cache for a
// minute anyway, so they are cached as long; DKIM is verified for every signed message.
import { dkimVerify, dmarc, spf } from "mailauth";
import type { DnsResolver } from "../../lib/dns.ts";
import { TtlCache } from "../../lib/ttl-cache.ts";
import type { PayloadEnvelope } from "../payload/payload.ts";

export interface AuthChecks {
  spf: PayloadEnvelope["spf"];
  dkim: PayloadEnvelope["dkim"];
  dmarc: PayloadEnvelope["dmarc"];
}

export const SPF_RESULTS = ["none", "neutral", "pass", "fail", "softfail", "temperror", "permerror"] as const;

/** What the parsed message already tells, so checks need not parse it again. */
export interface MessageFacts {
  hasDkimSignature: boolean;
  /** Addresses of the From header(s). */
  fromAddresses: string[];
  /** How many From header fields there are (DMARC needs exactly one). */
  fromFields: number;
}

export interface AuthSession {
  mailFrom: string;
  helo: string;
  remoteIp: string;
  mta: string;
}

/**
 * The SPF identity: the MAIL FROM address, or postmaster@<HELO name> for the null
 * sender (RFC 7208 section 2.4), never the message's own Return-Path header.
 */
export function spfSender(mailFrom: string, helo: string): string {
  return mailFrom !== "" ? mailFrom : `postmaster@${helo}`;
}

type SpfVerdict = { result: string; domain: string };
type DmarcVerdict = AuthChecks["dmarc"];

export class AuthChecker {
  private readonly spfCache: TtlCache<SpfVerdict>;
  private readonly dmarcCache: TtlCache<DmarcVerdict>;

  constructor(
    private readonly resolver: DnsResolver,
    cacheTtlMs = 60_000,
  ) {
    this.spfCache = new TtlCache(cacheTtlMs, 10_000);
    this.dmarcCache = new TtlCache(cacheTtlMs, 10_000);
  }

  private get resolve() {
    return this.resolver.resolve as never;
  }

  private spf(session: AuthSession, sender: string): Promise<SpfVerdict> {
    return this.spfCache.get(JSON.stringify([session.remoteIp, sender, session.helo]), async () => {
      const r = await spf({ ip: session.remoteIp, helo: session.helo, sender, mta: session.mta, resolver: this.resolve, strict: true });
      // temperror is a DNS hiccup, not a verdict worth keeping.
      if (r.status.result === "temperror")
        throw Object.assign(new Error("temperror"), { verdict: { result: r.status.result, domain: r.domain } });
      return { result: r.status.result, domain: r.domain };
    });
  }

  private dmarc(
    facts: MessageFacts,
    spfDomains: string[],
    dkimDomains: { id?: string; domain: string; aligned?: string | false; underSized?: number }[],
  ): Promise<DmarcVerdict> {
    const key = JSON.stringify([
      facts.fromAddresses.map((a) => a.slice(a.lastIndexOf("@") + 1).toLowerCase()),
      facts.fromFields,
      spfDomains,
      dkimDomains.map((d) => [d.domain, d.aligned ?? null, d.underSized ?? null]),
    ]);
    return this.dmarcCache.get(key, async () => {
      const d = await dmarc({
        headerFrom: facts.fromAddresses,
        fromFields: facts.fromFields,
        spfDomains,
        dkimDomains,
        resolver: this.resolve,
        strict: true,
      });
      const verdict = d
        ? { result: d.status.result, domain: d.domain ?? null, policy: d.policy ?? null }
        : { result: "none", domain: null, policy: null };
      if (verdict.result === "temperror") throw Object.assign(new Error("temperror"), { verdict });
      return verdict;
    });
  }

  async check(raw: Buffer, session: AuthSession, facts: MessageFacts): Promise<AuthChecks> {
    const sender = spfSender(session.mailFrom, session.helo);
    const spfDomain = sender.slice(sender.lastIndexOf("@") + 1).toLowerCase();
    const uncached = <T>(err: unknown): T => {
      const verdict = (err as { verdict?: T }).verdict;
      if (verdict) return verdict;
      throw err;
    };
    try {
      // SPF and DKIM are independent: their DNS questions go out together, so a message
      // waits for the slower of the two lookups, not for both in turn. DMARC needs both.
      const [spfVerdict, dkim] = await Promise.all([
        this.spf(session, sender).catch(uncached<SpfVerdict>),
        facts.hasDkimSignature ? dkimVerify(raw, { resolver: this.resolve, sender, strict: true }) : null,
      ]);
      const results = (dkim?.results ?? []).filter((r) => r.signingDomain);
      const signatures = results.map((r) => ({
        domain: r.signingDomain!,
        selector: r.selector ?? "",
        result: r.status?.result ?? "neutral",
      }));
      const passing = results
        .filter((r) => r.status?.result === "pass")
        .map((r) => ({
          id: r.id,
          domain: r.signingDomain!,
          aligned: (r.status as { aligned?: string | false }).aligned,
          underSized: (r.status as { underSized?: number }).underSized,
        }));
      const dmarcVerdict =
        facts.fromAddresses.length > 0
          ? await this.dmarc(facts, spfVerdict.result === "pass" ? [spfVerdict.domain] : [], passing).catch(uncached<DmarcVerdict>)
          : { result: "none", domain: null, policy: null };
      return {
        spf: { result: spfVerdict.result, domain: spfDomain },
        dkim: { result: signatures.some((s) => s.result === "pass") ? "pass" : (signatures[0]?.result ?? "none"), signatures },
        dmarc: dmarcVerdict,
      };
    } catch {
      // A check that cannot run must not lose the message: report it as a temporary error.
      return {
        spf: { result: "temperror", domain: spfDomain },
        dkim: { result: "temperror", signatures: [] },
        dmarc: { result: "temperror", domain: null, policy: null },
      };
    }
  }
}

/** The facts the checks need, from mailparser's result. */
export function messageFacts(parsed: { headerLines: readonly { key: string }[]; from?: { value: { address?: string }[] } }): MessageFacts {
  return {
    hasDkimSignature: parsed.headerLines.some((l) => l.key === "dkim-signature"),
    fromAddresses: (parsed.from?.value ?? []).map((v) => v.address ?? "").filter((a) => a !== ""),
    fromFields: parsed.headerLines.filter((l) => l.key === "from").length,
  };
}
