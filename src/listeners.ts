// Every socket the appliance listens on: the API (HTTP or HTTPS), the ACME challenge
// port, inbound SMTP, submission with STARTTLS and with implicit TLS. Each gets the
// certificate of the TLS manager when it starts and every later one while it runs;
// a listener that cannot work without a certificate (HTTPS, implicit TLS) starts when
// the first one arrives.
import type { SMTPServer } from "smtp-server";
import type { HttpHandler } from "./http/serve.ts";
import { HttpListener } from "./http/listener.ts";
import type { Config } from "./config/config.ts";
import { formatListen, type ListenAddress } from "./config/units.ts";
import type { Logger } from "./lib/logger.ts";
import { closeSmtp, listenSmtp } from "./smtp/listen.ts";
import type { TlsMaterial } from "./tls/certificate.ts";
import { listenForChallenges } from "./tls/challenge-listener.ts";
import type { ChallengeResponder } from "./tls/challenges.ts";
import type { TlsManager } from "./tls/manager.ts";
import { useCertificate } from "./tls/smtp-tls.ts";

export interface ListenerFactories {
  api: HttpHandler;
  inbound(tls: TlsMaterial | null): SMTPServer;
  submission(implicitTls: boolean, tls: TlsMaterial | null): SMTPServer;
}

export interface ListenersDeps {
  config(): Config;
  logger: Logger;
  tls: TlsManager;
  responder: ChallengeResponder;
  make: ListenerFactories;
}

type SmtpKind = "inbound" | "submission" | "submissionTls";

const WAITING = "waiting for a certificate";
const sameAddress = (a: ListenAddress | null, b: ListenAddress | null) =>
  a !== null && b !== null && a.host === b.host && a.port === b.port;
const isLoopbackHost = (host: string) => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);

export class Listeners {
  private http: HttpListener | null = null;
  private challenges: ReturnType<typeof Bun.serve> | null = null;
  private readonly smtp: Record<SmtpKind, { server: SMTPServer; port: number } | null> = {
    inbound: null,
    submission: null,
    submissionTls: null,
  };
  // A listener whose start is awaiting its bind. The first certificate can arrive while
  // start() is still binding the others, and both paths start the implicit-TLS listener:
  // it must be bound once (twice was EADDRINUSE on a fixed port, two listeners on port 0).
  private readonly starting: Partial<Record<SmtpKind, Promise<void>>> = {};
  private stopped = false;

  constructor(private readonly deps: ListenersDeps) {
    deps.tls.onChange((material) => {
      if (!this.stopped)
        this.useCertificate(material).catch((err) => deps.logger.error("listener could not take the new certificate", { err }));
    });
  }

  async start(): Promise<void> {
    const config = this.deps.config();
    const material = this.deps.tls.current();
    const log = this.deps.logger;
    if (config.http.listen) {
      const responder = this.deps.responder;
      const api = this.deps.make.api;
      this.http = new HttpListener({
        at: config.http.listen,
        // The CA may also come to the API's port when it is port 80.
        handle: (req, ip) => responder.answer(new URL(req.url).pathname) ?? api(req, ip),
        logger: log,
      });
      if (!config.http.tls) this.http.start(null);
      else if (material) this.http.start(material);
      else log.warn("https api waits for a certificate", { listen: `${config.http.listen.host}:${config.http.listen.port}` });
    }
    const challengeAt = config.tls.mode === "acme" ? config.tls.acme.challengeListen : null;
    if (challengeAt && (config.http.tls || !sameAddress(challengeAt, config.http.listen))) {
      this.challenges = listenForChallenges(challengeAt, this.deps.responder, () =>
        this.deps.config().http.tls ? new URL(this.deps.config().http.publicUrl).origin : null,
      );
      log.info("acme challenge listener", { address: challengeAt.host, port: this.challenges.port });
    }
    if (config.smtp.inboundListen) await this.startSmtp("inbound", config.smtp.inboundListen, material);
    if (config.smtp.submissionListen) await this.startSmtp("submission", config.smtp.submissionListen, material);
    if (config.smtp.submissionTlsListen) {
      if (material) await this.startSmtp("submissionTls", config.smtp.submissionTlsListen, material);
      else
        log.warn("implicit-tls submission waits for a certificate", {
          listen: `${config.smtp.submissionTlsListen.host}:${config.smtp.submissionTlsListen.port}`,
        });
    }
  }

  port(kind: "http" | "challenges" | SmtpKind): number | null {
    if (kind === "http") return this.http?.port ?? null;
    if (kind === "challenges") return this.challenges?.port ?? null;
    return this.smtp[kind]?.port ?? null;
  }

  /** One health check per configured listener: "ok", "down" or waiting for a certificate. */
  checks(): Record<string, string> {
    const config = this.deps.config();
    const checks: Record<string, string> = {};
    const smtpState = (kind: SmtpKind) => (this.smtp[kind]?.server.server.listening ? "ok" : "down");
    if (config.http.listen) checks.http = this.http?.listening ? "ok" : config.http.tls ? WAITING : "down";
    if (config.smtp.inboundListen) checks.smtp_inbound = smtpState("inbound");
    if (config.smtp.submissionListen) checks.smtp_submission = smtpState("submission");
    if (config.smtp.submissionTlsListen)
      checks.smtp_submission_tls = this.smtp.submissionTls || this.deps.tls.current() ? smtpState("submissionTls") : WAITING;
    return checks;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(Object.values(this.smtp).map((s) => s && closeSmtp(s.server)));
    this.smtp.inbound = this.smtp.submission = this.smtp.submissionTls = null;
    await this.http?.stop();
    await this.challenges?.stop(true);
    this.http = this.challenges = null;
  }

  /** Starts a listener once: a call while it is binding waits for that bind; one after it is up does nothing. */
  private startSmtp(kind: SmtpKind, at: ListenAddress, material: TlsMaterial | null): Promise<void> {
    if (this.smtp[kind]) return Promise.resolve();
    const pending = this.starting[kind] ?? this.bindSmtp(kind, at, material).finally(() => delete this.starting[kind]);
    this.starting[kind] = pending;
    return pending;
  }

  private async bindSmtp(kind: SmtpKind, at: ListenAddress, material: TlsMaterial | null): Promise<void> {
    const server = kind === "inbound" ? this.deps.make.inbound(material) : this.deps.make.submission(kind === "submissionTls", material);
    const port = await listenSmtp(server, at);
    this.smtp[kind] = { server, port };
    this.deps.logger.info(`${kind === "inbound" ? "inbound" : "submission"} smtp listening`, {
      address: at.host,
      port,
      tls: kind === "submissionTls" ? "implicit" : material ? "starttls" : "none",
    });
    if (kind === "submission" && !material) this.warnAuthInClear(at, port);
  }

  /** Submission without a certificate: why AUTH is refused, or that it goes in clear. */
  private warnAuthInClear(at: ListenAddress, port: number): void {
    const config = this.deps.config();
    const listen = formatListen({ host: at.host, port });
    if (!config.smtp.allowInsecureAuth) {
      const waiting = config.tls.mode === "acme" ? " until the ACME certificate arrives" : "";
      this.deps.logger.warn(`submission smtp refuses AUTH${waiting}: no TLS certificate, so clients get 538 5.7.11`, {
        listen,
        fix: 'a certificate in [tls] (mode = "files" or "acme") so clients can STARTTLS, or smtp.allow_insecure_auth = true for tests on loopback',
      });
    } else if (!isLoopbackHost(at.host)) {
      this.deps.logger.warn("submission smtp accepts AUTH in clear on a non-loopback address: passwords cross the network readable", {
        listen,
        fix: 'a certificate in [tls] (mode = "files" or "acme"), or smtp.allow_insecure_auth = false, or listen on 127.0.0.1',
      });
    }
  }

  private async useCertificate(material: TlsMaterial): Promise<void> {
    const config = this.deps.config();
    if (this.http && config.http.tls) {
      if (this.http.listening) this.http.useCertificate(material);
      else this.http.start(material);
    }
    // A listener still binding takes this certificate once it is up (it may have started with an older one).
    await Promise.allSettled(Object.values(this.starting));
    for (const kind of ["inbound", "submission"] as const) {
      const running = this.smtp[kind];
      if (running) useCertificate(running.server, material, true);
    }
    const implicit = this.smtp.submissionTls;
    if (implicit) useCertificate(implicit.server, material, false);
    else if (config.smtp.submissionTlsListen && !this.stopped)
      await this.startSmtp("submissionTls", config.smtp.submissionTlsListen, material);
  }
}
