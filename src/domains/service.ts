// Sending domains as the rest of the appliance uses them: creating one (keys and all),
// checking its DNS now (E18) or when due (the background verifier), deciding whether
// mail may go out from an address, and signing what does.
import { dkimSign } from "mailauth";
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { newId16 } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import { checkDomain } from "./checker.ts";
import { decryptSecret, encryptSecret, newEd25519Key, newRsaKey, newSelector } from "./keys.ts";
import type { SendingDomain, SendingDomainRepo } from "./sending-domains.repo.ts";
import { nextState, sendingStatus, type SendingStatus } from "./verification.ts";

/** Headers every signature covers when present. */
export const SIGNED_HEADERS = ["from", "to", "cc", "subject", "date", "message-id", "reply-to", "mime-version", "content-type", "content-transfer-encoding"];
/** Listed once more than they occur, so none can be added after signing (see patches/mailauth). */
export const OVERSIGNED_HEADERS = ["From"];

export interface DomainServiceDeps {
  repo: SendingDomainRepo;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  config(): Config;
  /** The key that encrypts DKIM private keys at rest. */
  encryptionKey: Buffer;
}

/** The domain and its parents: mail from a.b.example.com may use b.example.com or example.com. */
export function domainAndParents(domain: string): string[] {
  const labels = domain.toLowerCase().split(".");
  const out: string[] = [];
  for (let i = 0; i < labels.length - 1; i++) out.push(labels.slice(i).join("."));
  return out;
}

export class DomainService {
  constructor(private readonly deps: DomainServiceDeps) {}

  async create(accountId: string, domain: string): Promise<SendingDomain> {
    const rsa = newRsaKey();
    const ed = newEd25519Key();
    const now = this.deps.clock.nowMs();
    const d: SendingDomain = {
      id: newId16(),
      accountId,
      domain,
      dkimSelector: newSelector(),
      dkimPublicKey: rsa.publicKey,
      dkimPrivateKeyEnc: encryptSecret(rsa.privateKeyPem, this.deps.encryptionKey),
      ed25519Selector: newSelector(),
      ed25519PublicKey: ed.publicKey,
      ed25519PrivateKeyEnc: encryptSecret(ed.privateKeyPem, this.deps.encryptionKey),
      checks: { dkim: false, ed25519: false, return_path: false, spf: false },
      reasons: {},
      verifiedAtMs: null,
      failingSinceMs: null,
      checkedAtMs: null,
      // The first background look comes soon: people publish records right after adding.
      nextCheckAtMs: now + 60_000,
      createdAtMs: now,
    };
    await this.deps.repo.insert(d);
    return d;
  }

  /** Checks the records now, stores the outcome (and any change as an event), returns the domain. */
  async verify(d: SendingDomain): Promise<SendingDomain> {
    const config = this.deps.config();
    const now = this.deps.clock.nowMs();
    const { checks, reasons } = await checkDomain(d, { resolver: this.deps.resolver, bounceHost: config.outbound.bounceHost, sendingIps: config.outbound.sendingIps, hostname: config.hostname });
    const next = nextState(d, checks, reasons as Record<string, string>, now, {
      unverifiedMs: config.domains.recheckUnverifiedMs,
      verifiedMs: config.domains.recheckVerifiedMs,
      graceMs: config.domains.graceMs,
      jitter: 0.1,
    });
    const outcome = { checks, reasons, verifiedAtMs: next.verifiedAtMs, failingSinceMs: next.failingSinceMs, checkedAtMs: now, nextCheckAtMs: next.nextCheckAtMs };
    await this.deps.repo.recordCheck(d.id, outcome, next.events);
    for (const e of next.events) this.deps.logger.info(`sending domain ${e.kind.replace("_", " ")}`, { domain: d.domain, domain_id: d.id, ...e.details });
    return { ...d, ...outcome };
  }

  /** The background verifier's work: every domain whose check is due. */
  async verifyDue(limit = 50): Promise<number> {
    const due = await this.deps.repo.due(this.deps.clock.nowMs(), limit);
    for (const d of due) {
      try {
        await this.verify(d);
      } catch (err) {
        this.deps.logger.error("sending domain check failed", { err, domain: d.domain });
      }
    }
    return due.length;
  }

  status(d: SendingDomain): SendingStatus {
    return sendingStatus(d, this.deps.clock.nowMs(), this.deps.config().domains.graceMs);
  }

  /**
   * The account's sending domain for a from address's domain (the most specific of the
   * domain and its parents), or null.
   */
  async domainFor(accountId: string, fromDomain: string): Promise<SendingDomain | null> {
    const names = domainAndParents(fromDomain);
    const found = await this.deps.repo.findForAccount(accountId, names);
    found.sort((a, b) => b.domain.length - a.domain.length);
    return found.find((d) => this.status(d) !== "unverified") ?? found[0] ?? null;
  }

  /** DKIM-signs with the domain's RSA key, and its Ed25519 key once that record is published. */
  async sign(d: SendingDomain, raw: Buffer): Promise<Buffer> {
    const key = (enc: string) => decryptSecret(enc, this.deps.encryptionKey);
    const signatureData = [{ signingDomain: d.domain, selector: d.dkimSelector, privateKey: key(d.dkimPrivateKeyEnc), algorithm: "rsa-sha256" }];
    if (d.checks.ed25519) signatureData.push({ signingDomain: d.domain, selector: d.ed25519Selector, privateKey: key(d.ed25519PrivateKeyEnc), algorithm: "ed25519-sha256" });
    const signed = await dkimSign(raw, {
      signingDomain: d.domain,
      selector: d.dkimSelector,
      privateKey: signatureData[0]!.privateKey,
      canonicalization: "relaxed/relaxed",
      headerList: SIGNED_HEADERS,
      signTime: new Date(this.deps.clock.nowMs()),
      signatureData: signatureData.map((s) => ({ ...s, canonicalization: "relaxed/relaxed", headerList: SIGNED_HEADERS, oversign: OVERSIGNED_HEADERS })) as never,
    });
    if (signed.errors.length > 0) throw new Error(`DKIM signing failed: ${JSON.stringify(signed.errors)}`);
    return Buffer.concat([Buffer.from(signed.signatures), raw]);
  }
}
