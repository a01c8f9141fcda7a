// Sending domains as the rest of the appliance uses them: creating one (keys and all),
// checking its DNS now (E18) or when due (the background verifier), deciding whether
// mail may go out from an address, and signing what does.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { newId16 } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { checkDomain, namesOf } from "./checker.ts";
import { checkDomainHealth } from "./domain-health-check.ts";
import { encryptSecret, newEd25519Key, newRsaKey, newSelector } from "./keys.ts";
import { SignPool, signWorkerCount } from "./sign-pool.ts";
import { SENDING_DOMAIN_CACHE_MAX_AGE_MS, type SendingDomainCaches, type SendingDomainRepo } from "./sending-domains.port.ts";
import type { SendingDomain } from "./sending-domain.ts";
import { SigningKeyCache } from "./signing-keys.ts";
import { nextState, sendingStatus, type SendingStatus } from "./verification.ts";

export interface DomainServiceDeps {
  repo: SendingDomainRepo;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  config(): Config;
  /** The key that encrypts DKIM private keys at rest. */
  encryptionKey: Buffer;
}

/** (account, from domain) pairs whose sending domains stay looked up in memory at once. */
export const MAX_CACHED_DOMAIN_LOOKUPS = 1000;

/** The domain and its parents: mail from a.b.example.com may use b.example.com or example.com. */
export function domainAndParents(domain: string): string[] {
  const labels = domain.toLowerCase().split(".");
  const out: string[] = [];
  for (let i = 0; i < labels.length - 1; i++) out.push(labels.slice(i).join("."));
  return out;
}

export class DomainService implements SendingDomainCaches {
  /**
   * The account's live domains for a from domain, as the repository returned them, and when.
   * A message looks its domain up when it is accepted and again for each signature; every
   * write to a domain (added, checked, deleted) empties this, on every node
   * (SendingDomainCaches), so the rows here are the rows in the database, and none is used
   * once SENDING_DOMAIN_CACHE_MAX_AGE_MS old. The status is still worked out from them at
   * each use (it moves with time).
   */
  private readonly lookups = new BoundedCache<string, { found: SendingDomain[]; loadedMs: number }>(MAX_CACHED_DOMAIN_LOOKUPS);
  /** Counts writes, so a lookup that a write overtook is not kept. */
  private writes = 0;
  private readonly keys: SigningKeyCache;
  private readonly signer: SignPool;

  constructor(private readonly deps: DomainServiceDeps) {
    this.keys = new SigningKeyCache(deps.encryptionKey);
    this.signer = new SignPool(signWorkerCount(), deps.logger);
    deps.repo.onChange((domainId) => this.forget(domainId));
  }

  /** A domain was written to (here or on another node): no lookup is kept, nor its keys. */
  forget(domainId: string): void {
    this.writes++;
    this.lookups.clear();
    this.keys.forget(domainId);
  }

  /** Any domain may have changed (notices from other nodes were missed). */
  forgetAll(): void {
    this.writes++;
    this.lookups.clear();
    this.keys.forgetAll();
  }

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
      health: null,
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
    const { checks, reasons } = await checkDomain(d, {
      resolver: this.deps.resolver,
      bounceHost: config.outbound.bounceHost,
      sendingIps: config.outbound.sendingIps,
      hostname: config.hostname,
    });
    const names = namesOf(d, config.outbound.bounceHost);
    const hosts = { dkim: names.dkimDomain, mta: names.mtaDomain, bounce: names.requiredCname };
    const health = await checkDomainHealth(this.deps.resolver, d.domain, hosts, checks, reasons, d.health);
    const next = nextState(d, checks, reasons as Record<string, string>, now, {
      unverifiedMs: config.domains.recheckUnverifiedMs,
      verifiedMs: config.domains.recheckVerifiedMs,
      graceMs: config.domains.graceMs,
      jitter: 0.1,
    });
    const outcome = {
      checks,
      reasons,
      health,
      verifiedAtMs: next.verifiedAtMs,
      failingSinceMs: next.failingSinceMs,
      checkedAtMs: now,
      nextCheckAtMs: next.nextCheckAtMs,
    };
    await this.deps.repo.recordCheck(d.id, outcome, next.events);
    for (const e of next.events)
      this.deps.logger.info(`sending domain ${e.kind.replace("_", " ")}`, { domain: d.domain, domain_id: d.id, ...e.details });
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
    // Mail from a sending domain is about to be signed: have the signing workers ready.
    this.signer.warm();
    const key = `${accountId} ${fromDomain.toLowerCase()}`;
    const cached = this.lookups.get(key);
    let found = cached && this.deps.clock.nowMs() - cached.loadedMs < SENDING_DOMAIN_CACHE_MAX_AGE_MS ? cached.found : null;
    if (!found) {
      const writesBefore = this.writes;
      const loadedMs = this.deps.clock.nowMs();
      found = await this.deps.repo.findForAccount(accountId, domainAndParents(fromDomain));
      found.sort((a, b) => b.domain.length - a.domain.length);
      if (this.writes === writesBefore) this.lookups.set(key, { found, loadedMs });
    }
    return found.find((d) => this.status(d) !== "unverified") ?? found[0] ?? null;
  }

  /** Sending domains whose decrypted keys are in memory (tests). */
  cachedKeyIds(): string[] {
    return this.keys.cachedIds();
  }

  /** DKIM-signs with the domain's RSA key, and its Ed25519 key once that record is published. */
  async sign(d: SendingDomain, raw: Buffer): Promise<Buffer> {
    const keys = this.keys.keysFor(d);
    const signatures = await this.signer.sign({
      raw,
      domain: d.domain,
      rsa: { selector: d.dkimSelector, keyPem: keys.rsaPem },
      ed25519: d.checks.ed25519 ? { selector: d.ed25519Selector, keyPem: keys.ed25519Pem() } : null,
      signTimeMs: this.deps.clock.nowMs(),
    });
    return Buffer.concat([Buffer.from(signatures), raw]);
  }

  /** Stops the signing workers (at shutdown; they do not keep the process alive meanwhile). */
  close(): void {
    this.signer.close();
  }
}
