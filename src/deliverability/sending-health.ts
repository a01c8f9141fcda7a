// The sending IPs' health as this node knows it: the check (at start, then hourly on the
// node holding the job's lease) stores every address's result; each node reads the stored
// rows back for /healthz, whose report is synchronous, at most a minute old.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { FailureStreak } from "../lib/failure-streak.ts";
import type { Logger } from "../lib/logger.ts";
import { checkSendingIp } from "./ip-check.ts";
import type { SendingIpHealthRepo } from "./sending-ip-health.port.ts";
import { ipWarnings, type SendingIpHealth, sendingIpsOf } from "./sending-ip.ts";

/** How old the rows /healthz shows may be before they are read again. */
export const HEALTH_REREAD_MS = 60_000;
/** Addresses checked at once: each asks one PTR and one name per zone. */
const CHECK_CONCURRENCY = 4;

export interface SendingHealthDeps {
  config(): Config;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  repo: SendingIpHealthRepo;
}

export class SendingHealth {
  private rows: SendingIpHealth[] = [];
  /** listedIps()'s answer and the rows it was made from. */
  private listed: ReadonlySet<string> = new Set();
  private listedOf: SendingIpHealth[] | null = null;
  private readAtMs = -Infinity;
  private reading: Promise<void> | null = null;
  /** Reads that failed in a row (the store is away; each /healthz asks again): logged once. */
  private readonly readFailures: FailureStreak;
  private checking: Promise<SendingIpHealth[]> | null = null;
  private stopped = false;
  private writing: Promise<void> | null = null;

  constructor(private readonly deps: SendingHealthDeps) {
    this.readFailures = new FailureStreak(deps.logger, "warn", "the sending IPs' health could not be read");
  }

  /** Checks every sending IP now and stores the results (one check at a time on a node). */
  check(): Promise<SendingIpHealth[]> {
    this.checking ??= this.checkAll().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /** Checks with the config as it is now: after the check under way, if any, which read the config before. */
  recheck(): Promise<SendingIpHealth[]> {
    const running = this.checking;
    return running ? running.catch(() => []).then(() => this.check()) : this.check();
  }

  private async checkAll(): Promise<SendingIpHealth[]> {
    const config = this.deps.config();
    const addresses = sendingIpsOf(config);
    const zones = config.outbound.dnsblZones;
    const results: SendingIpHealth[] = [];
    for (let i = 0; i < addresses.length; i += CHECK_CONCURRENCY) {
      const batch = addresses.slice(i, i + CHECK_CONCURRENCY);
      results.push(...(await Promise.all(batch.map((a) => checkSendingIp(this.deps.resolver, a, zones, this.deps.clock.nowMs())))));
    }
    // Stopping does not wait for blocklists that do not answer: their results are dropped.
    if (this.stopped) return results;
    this.writing = this.deps.repo.replaceAll(results);
    await this.writing;
    this.rows = results;
    this.readAtMs = this.deps.clock.nowMs();
    for (const h of results) {
      const warnings = ipWarnings(h);
      if (warnings.length > 0) this.deps.logger.warn("sending IP needs a look", { ip: h.ip, warnings });
    }
    this.deps.logger.info("sending IPs checked", { ips: results.length, zones: zones.length });
    return results;
  }

  /** The stored rows (every node's view of the last check). */
  list(): Promise<SendingIpHealth[]> {
    return this.deps.repo.list();
  }

  /**
   * The warnings of the last check this node knows of, for /healthz (synchronous): the
   * stored rows are read again in the background once HEALTH_REREAD_MS old.
   */
  warnings(): string[] {
    const now = this.deps.clock.nowMs();
    if (now - this.readAtMs >= HEALTH_REREAD_MS && !this.reading && !this.stopped) {
      this.reading = this.reread().finally(() => {
        this.reading = null;
      });
    }
    return this.rows.flatMap(ipWarnings);
  }

  /**
   * The addresses on a blocklist at the last check this node knows of, for the pool picker
   * (synchronous, as warnings(): the rows are read again in the background once old).
   */
  listedIps(): ReadonlySet<string> {
    this.warnings();
    if (this.listedOf !== this.rows) {
      this.listedOf = this.rows;
      this.listed = new Set(this.rows.filter((h) => h.listed.length > 0).map((h) => h.ip));
    }
    return this.listed;
  }

  /** Reads the stored rows now (at start, and when warnings() finds them old). */
  async reread(): Promise<void> {
    try {
      this.rows = await this.deps.repo.list();
      this.readAtMs = this.deps.clock.nowMs();
      this.readFailures.succeeded();
    } catch (err) {
      this.readFailures.failed(err);
    }
  }

  /**
   * At stop: a check still asking DNS writes nothing when its answers come (the store is
   * closing); a read or write under way is waited for.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([this.reading, this.writing]);
  }
}
