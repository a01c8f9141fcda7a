// The certificate every listener uses. It loads the configured files (and notices when
// they are replaced) or obtains and renews one by ACME, and tells each subscriber when
// the certificate changes so new connections get it without a restart. A bad file or a
// failed order is logged with its reason and the old certificate stays in use.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Logger } from "../lib/logger.ts";
import { AcmeError, orderCertificate } from "./acme.ts";
import { describeCertificate, pairProblem, type CertificateInfo, type TlsMaterial } from "./certificate.ts";
import type { ChallengeResponder } from "./challenges.ts";
import { importLegacyTlsFiles } from "./legacy-import.ts";
import { failureBackoffMs, renewalDecision } from "./renewal.ts";
import { filesStamp, loadConfigured } from "./sources.ts";
import type { OrderFailure, TlsStore } from "./tls-store.port.ts";

export interface TlsManagerDeps {
  config(): Config;
  clock: Clock;
  resolver: DnsResolver;
  responder: ChallengeResponder;
  /** Where the ACME certificate, account and last order failure are kept. */
  store: TlsStore;
  logger: Logger;
}

export interface TlsStatus {
  mode: Config["tls"]["mode"];
  certificate: CertificateInfo | null;
  /** Why there is no certificate, or why the last load or order failed. */
  problem: string | null;
  /** When the next ACME order may be tried after failures. */
  retryAtMs: number | null;
}

type Listener = (material: TlsMaterial) => void;

export class TlsManager {
  private material: TlsMaterial | null = null;
  private info: CertificateInfo | null = null;
  private problem: string | null = null;
  private stamp = "";
  private failures = 0;
  private lastFailureMs: number | null = null;
  private retryAtMs: number | null = null;
  private ordering: Promise<boolean> | null = null;
  private readonly listeners: Listener[] = [];

  constructor(private readonly deps: TlsManagerDeps) {}

  /** The certificate in use, or null (no TLS offered yet). */
  current(): TlsMaterial | null {
    return this.material;
  }

  /** Calls `listener` with every later certificate (not the current one). */
  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }

  status(): TlsStatus {
    return { mode: this.deps.config().tls.mode, certificate: this.info, problem: this.problem, retryAtMs: this.retryAtMs };
  }

  /**
   * Loads the certificate there is now (the files, or in ACME mode the store's, after
   * importing an older version's files once); in ACME mode an order due starts in the
   * background. The scheduler then calls check() every tls.check_interval.
   */
  async start(): Promise<void> {
    const config = this.deps.config();
    if (config.tls.mode === "off") return;
    this.stamp = config.tls.mode === "files" ? filesStamp(config) : "";
    if (config.tls.mode === "acme") {
      // A store whose keys cannot be opened is reported by load() below; the start goes on.
      await importLegacyTlsFiles(config.dataDir, this.deps.store, this.deps.logger).catch((err) =>
        this.deps.logger.warn("tls files under data_dir/tls not imported", { err }),
      );
    }
    await this.load();
    // load() just read the store: only the renewal decision (and an order it asks for) is left.
    if (config.tls.mode === "acme") void this.renewIfDue().catch((err) => this.deps.logger.error("tls check failed", { err }));
  }

  /** One periodic check: a replaced file is loaded; an ACME certificate due is renewed. */
  async check(): Promise<void> {
    const config = this.deps.config();
    if (config.tls.mode === "files") {
      const stamp = filesStamp(config);
      if (stamp === this.stamp) return;
      this.stamp = stamp;
      await this.load();
      return;
    }
    if (config.tls.mode !== "acme") return;
    await this.takeStored();
    await this.renewIfDue();
  }

  /** ACME mode: orders a certificate when the one in use is due (or missing) and back-off allows. */
  private async renewIfDue(): Promise<void> {
    const config = this.deps.config();
    if (config.tls.mode !== "acme") return;
    const decision = renewalDecision(
      { info: this.info, failures: this.failures, lastFailureMs: this.lastFailureMs },
      config.tls.acme.domains,
      this.deps.clock.nowMs(),
      config.tls.renewBeforeMs,
      config.tls.acme.failureBackoffMs,
    );
    if (decision.order) await this.renew(decision.why);
  }

  /**
   * ACME mode: takes a newer certificate from the store, which the node holding the
   * check-certificate lease (the one that orders) saved there. Every node calls this on its
   * own schedule, so each serves a renewed certificate without ordering one itself.
   */
  async reloadStored(): Promise<void> {
    if (this.deps.config().tls.mode === "acme") await this.takeStored();
  }

  /**
   * Orders a certificate now (ACME mode), whatever the expiry and back-off say; resolves
   * true when a new certificate is in use. One order at a time: a second call joins it.
   */
  renew(why = "renewal forced"): Promise<boolean> {
    this.ordering ??= this.order(why).finally(() => (this.ordering = null));
    return this.ordering;
  }

  private async order(why: string): Promise<boolean> {
    const config = this.deps.config();
    if (config.tls.mode !== "acme") return false;
    const { acme } = config.tls;
    const log = this.deps.logger;
    log.info("acme order", { domains: acme.domains, directory: acme.directoryUrl, why });
    try {
      const material = await orderCertificate(acme, {
        store: this.deps.store,
        responder: this.deps.responder,
        resolver: this.deps.resolver,
        logger: log,
      });
      const problem = pairProblem(material, this.deps.clock.nowMs());
      if (problem) throw new AcmeError(`the CA returned an unusable certificate: ${problem}`);
      await this.deps.store.saveCertificate(material);
      await this.keepOrderFailure(null);
      this.failures = 0;
      this.lastFailureMs = this.retryAtMs = null;
      this.use(material);
      return true;
    } catch (err) {
      this.failures++;
      this.lastFailureMs = this.deps.clock.nowMs();
      this.retryAtMs = this.lastFailureMs + failureBackoffMs(this.failures, acme.failureBackoffMs);
      this.problem = `ACME order failed: ${(err as Error).message}`;
      await this.keepOrderFailure({ atMs: this.lastFailureMs, reason: (err as Error).message, retryAtMs: this.retryAtMs });
      log.error("acme order failed", {
        domains: acme.domains,
        reason: (err as Error).message,
        failures: this.failures,
        retry_at: new Date(this.retryAtMs).toISOString(),
        still_using: this.info ? this.info.serial : "no certificate (STARTTLS not offered)",
      });
      return false;
    }
  }

  /** For `postroom tls status`; a store that refuses this write must not hide the order's own outcome. */
  private async keepOrderFailure(failure: OrderFailure | null): Promise<void> {
    try {
      await this.deps.store.saveOrderFailure(failure);
    } catch (err) {
      this.deps.logger.warn("acme order outcome not kept for tls status", { err });
    }
  }

  /** A certificate another node on the same store obtained since: used here too. */
  private async takeStored(): Promise<void> {
    try {
      const stored = await this.deps.store.certificate();
      if (stored && stored.cert !== this.material?.cert && !pairProblem(stored, this.deps.clock.nowMs())) this.use(stored);
    } catch (err) {
      this.deps.logger.warn("tls certificate not read from the store", { err });
    }
  }

  private async load(): Promise<void> {
    const loaded = await loadConfigured(this.deps.config(), () => this.deps.store, this.deps.clock.nowMs());
    if (loaded.material) {
      this.use(loaded.material);
      return;
    }
    this.problem = loaded.problem;
    const mode = this.deps.config().tls.mode;
    // A missing ACME certificate before the first order is expected, not an error.
    if (mode === "acme" && this.info === null) return;
    this.deps.logger.error("tls certificate not loaded", {
      reason: loaded.problem,
      still_using: this.info ? `${this.info.names.join(",")} serial ${this.info.serial}` : "no certificate (STARTTLS not offered)",
    });
  }

  private use(material: TlsMaterial): void {
    const info = describeCertificate(material.cert);
    const changed = this.info?.serial !== info.serial || this.material?.key !== material.key;
    this.material = material;
    this.info = info;
    this.problem = null;
    if (!changed) return;
    this.deps.logger.info("tls certificate in use", {
      names: info.names,
      issuer: info.issuer,
      serial: info.serial,
      expires: new Date(info.notAfterMs).toISOString(),
    });
    for (const listener of this.listeners) {
      try {
        listener(material);
      } catch (err) {
        this.deps.logger.error("tls listener update failed", { err });
      }
    }
  }
}
