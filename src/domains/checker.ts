// Looks a sending domain's records up and judges them (verification.ts decides). Lookups
// bypass the DNS cache: a person who has just published a record expects it seen.
import { spf } from "mailauth";
import type { DnsResolver } from "../lib/dns.ts";
import { isNoDataError } from "../lib/dns.ts";
import type { CheckName, SendingDomain } from "./sending-domain.ts";
import { cnameVerdict, dkimRecordVerdict, spfVerdict, type Verdict } from "./verification.ts";

export interface DomainNames {
  mtaDomain: string;
  dkimDomain: string;
  ed25519Domain: string;
  requiredCname: string;
}

export function namesOf(d: Pick<SendingDomain, "domain" | "dkimSelector" | "ed25519Selector">, bounceHost: string): DomainNames {
  return {
    mtaDomain: `mta.${d.domain}`,
    dkimDomain: `${d.dkimSelector}._domainkey.${d.domain}`,
    ed25519Domain: `${d.ed25519Selector}._domainkey.${d.domain}`,
    requiredCname: bounceHost,
  };
}

export interface CheckContext {
  resolver: DnsResolver;
  bounceHost: string;
  sendingIps: readonly string[];
  hostname: string;
}

export interface CheckResult {
  checks: Record<CheckName, boolean>;
  reasons: Partial<Record<CheckName, string>>;
}

async function lookup<T>(what: string, host: string, ask: () => Promise<T[]>): Promise<T[] | Verdict> {
  try {
    return await ask();
  } catch (err) {
    if (isNoDataError(err)) return [];
    return {
      ok: false,
      reason: `could not look up the ${what} at ${host} (${(err as { code?: string }).code ?? (err as Error).message}); will try again`,
    };
  }
}

const isVerdict = (x: unknown): x is Verdict => typeof x === "object" && x !== null && "ok" in x;

export async function checkDomain(d: SendingDomain, ctx: CheckContext): Promise<CheckResult> {
  const names = namesOf(d, ctx.bounceHost);
  const r = ctx.resolver.uncached();
  const [dkimTxt, edTxt, cnames] = await Promise.all([
    lookup("TXT record", names.dkimDomain, () => r.resolveTxt(names.dkimDomain)),
    lookup("TXT record", names.ed25519Domain, () => r.resolveTxt(names.ed25519Domain)),
    lookup("CNAME", names.mtaDomain, () => r.resolveCname(names.mtaDomain)),
  ]);
  const dkim = isVerdict(dkimTxt) ? dkimTxt : dkimRecordVerdict(names.dkimDomain, dkimTxt, d.dkimPublicKey);
  const ed25519 = isVerdict(edTxt) ? edTxt : dkimRecordVerdict(names.ed25519Domain, edTxt, d.ed25519PublicKey);
  const returnPath = isVerdict(cnames) ? cnames : cnameVerdict(names.mtaDomain, cnames, names.requiredCname);
  const spfResults = await Promise.all(
    ctx.sendingIps.map(async (ip) => {
      try {
        const res = await spf({
          sender: `postmaster@${names.mtaDomain}`,
          ip,
          helo: ctx.hostname,
          mta: ctx.hostname,
          resolver: r.resolve as never,
          strict: true,
        });
        return { ip, result: res.status.result };
      } catch {
        return { ip, result: "temperror" };
      }
    }),
  );
  const spfCheck = spfVerdict(names.mtaDomain, spfResults);
  const verdicts: Record<CheckName, Verdict> = { dkim, ed25519, return_path: returnPath, spf: spfCheck };
  const checks = Object.fromEntries(Object.entries(verdicts).map(([k, v]) => [k, v.ok])) as Record<CheckName, boolean>;
  const reasons = Object.fromEntries(
    Object.entries(verdicts)
      .filter(([, v]) => v.reason)
      .map(([k, v]) => [k, v.reason]),
  ) as Partial<Record<CheckName, string>>;
  return { checks, reasons };
}
