// SPF, DKIM and DMARC of a received message, through mailauth with our resolver (the
// servers of `dns.servers`), so the checks see the same DNS as everything else.
// Every check is RFC-exact (strict): the lenient default misses SPF syntax errors after
// the matching term and takes invalid macro expansions (7 cases of the RFC 7208 suite).
// SPF and DMARC verdicts depend only on their inputs and on DNS answers we cache for a
// minute anyway, so they are cached as long; DKIM is verified for every signed message.
import { dkimVerify, dmarc, spf } from "mailauth";
import type { DnsResolver, ResolverOptions } from "../../lib/dns.ts";
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

  /** How a worker thread makes a resolver like this one's (none for a resolver made otherwise: the checks then stay here). */
  get resolverOptions(): ResolverOptions | undefined {
    return this.resolver.options;
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

  /**
   * SPF and DKIM, which need only the message's bytes, as plain data (they may be checked
   * on a worker thread: extract-pool.ts). Their DNS questions go out together, so a
   * message waits for the slower of the two lookups, not for both in turn.
   * `hasDkimSignature` may come from `hasDkimSignatureField`; verifying a message that has
   * none finds nothing either.
   */
  firstChecks(raw: Buffer, session: AuthSession, hasDkimSignature: boolean): Promise<FirstChecks> {
    const sender = spfSender(session.mailFrom, session.helo);
    return Promise.all([
      this.spf(session, sender).catch(uncached<SpfVerdict>),
      hasDkimSignature ? dkimVerify(raw, { resolver: this.resolve, sender, strict: true }).then(dkimChecks) : null,
    ]);
  }

  /**
   * SPF and DKIM started at once: the caller parses the message meanwhile (bench:inbound's
   * bare pipeline overlaps the two as well), then `finish` adds DMARC, which needs the
   * parsed From. `first`: the two already under way elsewhere (a worker thread).
   */
  begin(raw: Buffer, session: AuthSession, hasDkimSignature: boolean, first?: Promise<FirstChecks>): StartedChecks {
    const both = first ?? this.firstChecks(raw, session, hasDkimSignature);
    // A message refused after this never calls finish: its failure is not unhandled.
    both.catch(() => {});
    return { spfDomain: spfDomainOf(session), both };
  }

  /** The checks `begin` started, with DMARC of the message's From (see `begin`). */
  async finish(started: StartedChecks, facts: MessageFacts): Promise<AuthChecks> {
    const { spfDomain } = started;
    try {
      const [spfVerdict, dkim] = await started.both;
      const results = dkim ?? [];
      const signatures = results.map((r) => ({ domain: r.domain, selector: r.selector, result: r.result }));
      const passing = results
        .filter((r) => r.result === "pass")
        .map((r) => ({ id: r.id, domain: r.domain, aligned: r.aligned, underSized: r.underSized }));
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

  /** SPF, DKIM and DMARC of a message already parsed. */
  check(raw: Buffer, session: AuthSession, facts: MessageFacts): Promise<AuthChecks> {
    return this.finish(this.begin(raw, session, facts.hasDkimSignature), facts);
  }
}

/** One DKIM signature's verification, as the checks use it: plain data, to cross between threads. */
export interface DkimSignatureCheck {
  id?: string;
  domain: string;
  selector: string;
  result: string;
  /** What DMARC needs of a passing signature (mailauth's status fields). */
  aligned?: string | false;
  underSized?: number;
}

/** SPF's verdict and DKIM's signatures (null: the message has none), before DMARC. */
export type FirstChecks = [SpfVerdict, DkimSignatureCheck[] | null];

/** SPF and DKIM under way for one message (AuthChecker.begin). */
export interface StartedChecks {
  spfDomain: string;
  both: Promise<FirstChecks>;
}

/** The domain SPF checks for the session (of spfSender), lower-case. */
export function spfDomainOf(session: AuthSession): string {
  const sender = spfSender(session.mailFrom, session.helo);
  return sender.slice(sender.lastIndexOf("@") + 1).toLowerCase();
}

/** mailauth's DKIM results, the signatures with a signing domain, as plain data. */
function dkimChecks(dkim: Awaited<ReturnType<typeof dkimVerify>>): DkimSignatureCheck[] {
  return dkim.results
    .filter((r) => r.signingDomain)
    .map((r) => {
      const status = r.status as { result?: string; aligned?: string | false; underSized?: number } | undefined;
      return {
        id: r.id,
        domain: r.signingDomain!,
        selector: r.selector ?? "",
        result: status?.result ?? "neutral",
        aligned: status?.aligned,
        underSized: status?.underSized,
      };
    });
}

/** A verdict the cache would not keep (temperror) stands for this message all the same. */
function uncached<T>(err: unknown): T {
  const verdict = (err as { verdict?: T }).verdict;
  if (verdict) return verdict;
  throw err;
}

const LF = 0x0a;
const DKIM_SIGNATURE_FIELD = /^dkim-signature[ \t]*:/i;

/**
 * Whether the header section of `raw` has a DKIM-Signature field, read from the bytes
 * alone (before any parse): a line that starts with the field's name (any case) and a
 * colon. Where it errs (a line mailparser would not take for a field), DKIM verification
 * runs and finds no signature: the verdict is the same.
 */
export function hasDkimSignatureField(raw: Buffer): boolean {
  for (let at = 0; at < raw.length; ) {
    const lf = raw.indexOf(LF, at);
    const end = lf < 0 ? raw.length : lf;
    // The blank line that ends the header section ("\n" or "\r\n").
    if (end === at || (end === at + 1 && raw[at] === 0x0d)) return false;
    if ((raw[at] === 0x44 || raw[at] === 0x64) && DKIM_SIGNATURE_FIELD.test(raw.toString("latin1", at, Math.min(end, at + 32))))
      return true;
    at = end + 1;
  }
  return false;
}

/** The facts the checks need, from mailparser's result. */
export function messageFacts(parsed: { headerLines: readonly { key: string }[]; from?: { value: { address?: string }[] } }): MessageFacts {
  return {
    hasDkimSignature: parsed.headerLines.some((l) => l.key === "dkim-signature"),
    fromAddresses: (parsed.from?.value ?? []).map((v) => v.address ?? "").filter((a) => a !== ""),
    fromFields: parsed.headerLines.filter((l) => l.key === "from").length,
  };
}
