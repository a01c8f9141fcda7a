// One SMTP client connection to a remote server (nodemailer's SMTPConnection): connect to
// the address the egress guard checked, opportunistic STARTTLS, then any number of
// transactions on the same connection.
import { TLSSocket } from "node:tls";
import SMTPConnection from "nodemailer/lib/smtp-connection";
import type { SessionScope, TlsSessionCache } from "./tls-sessions.ts";

export interface SmtpEndpoint {
  /** Host name: for logs, SNI and the events' `mx`. */
  host: string;
  /** The checked address to connect to. */
  ip: string;
  port: number;
  /** Implicit TLS (smtps://). */
  secure: boolean;
  auth: { user: string; pass: string } | null;
}

export interface ClientOptions {
  heloName: string;
  /** The address of this host the connection leaves from (a pool's); unset = the system's choice. */
  localAddress?: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** Refuse to go on in clear (require_tls, MTA-STS); check the certificate against the MX name (MTA-STS enforce). */
  tls?: { require: boolean; verify: boolean; ca?: string[] };
  /** Resume the server's TLS session from `cache` and keep its new ones there; `checks` names the TLS requirement (tls-sessions.ts). */
  sessions?: { cache: TlsSessionCache; checks: string };
}

export interface TransactionResult {
  /** The server's reply code, or null when there was none (connection lost, timeout). */
  code: number | null;
  response: string;
}

/** How long QUIT waits for the server's 221 before the socket is closed anyway. */
export const QUIT_REPLY_TIMEOUT_MS = 1000;

/**
 * nodemailer keeps its socket to itself; after STARTTLS (or with implicit TLS) it is the
 * TLS socket, the one place a session can be read from and resumption seen.
 */
function tlsSocketOf(conn: SMTPConnection): TLSSocket | null {
  const socket = (conn as unknown as { _socket?: unknown })._socket;
  return socket instanceof TLSSocket ? socket : null;
}

const replyCode = (response: string | undefined): number | null => {
  const m = /^(\d{3})/.exec(response ?? "");
  return m ? Number(m[1]) : null;
};

export class SmtpClient {
  /** When it was opened (performance.now()): a connection is reused only for so long. */
  readonly openedAtMs = performance.now();
  /** Whether any transaction on it was refused or got no reply: such a connection is not kept for reuse. */
  sawError = false;
  private closing = false;
  /** The connection's public 'end' event came: the server or the network closed it. */
  private ended = false;

  private constructor(
    private readonly conn: SMTPConnection,
    readonly endpoint: SmtpEndpoint,
    /** The TLS handshake resumed an earlier session (no certificate exchange). */
    readonly tlsResumed: boolean,
    /** The pool address it was bound to, or null (the system's default address). */
    readonly sourceIp: string | null,
  ) {
    conn.once("end", () => {
      this.ended = true;
    });
  }

  get usable(): boolean {
    return !this.closing && !this.ended;
  }

  get tls(): boolean {
    return this.conn.secure;
  }

  static open(endpoint: SmtpEndpoint, opts: ClientOptions): Promise<SmtpClient> {
    const sessions = opts.sessions;
    const scope: SessionScope | null = sessions
      ? { host: endpoint.host, ip: endpoint.ip, port: endpoint.port, checks: sessions.checks }
      : null;
    const session = scope ? sessions!.cache.get(scope) : undefined;
    const conn = new SMTPConnection({
      host: endpoint.ip,
      port: endpoint.port,
      secure: endpoint.secure,
      servername: endpoint.host,
      name: opts.heloName,
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      // Opportunistic STARTTLS by default: used when offered, certificates not required to
      // verify (as every MTA does for port 25 unless a policy such as MTA-STS says otherwise).
      opportunisticTLS: !opts.tls?.require,
      requireTLS: opts.tls?.require ?? false,
      tls: {
        rejectUnauthorized: opts.tls?.verify ?? false,
        servername: endpoint.host,
        ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}),
        ...(session ? { session } : {}),
      },
      connectionTimeout: opts.connectTimeoutMs,
      greetingTimeout: opts.connectTimeoutMs,
      socketTimeout: opts.commandTimeoutMs,
      // The egress guard already judged the address we connect to.
      allowInternalNetworkInterfaces: true,
    } as SMTPConnection.Options);
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => {
        conn.close();
        // The next attempt makes a full handshake, in case the session was the trouble.
        if (scope && session) sessions!.cache.forget(scope);
        reject(err);
      };
      conn.once("error", fail);
      conn.connect(() => {
        const ready = () => {
          conn.off("error", fail);
          // Later errors surface through send(); keep the emitter from throwing.
          conn.on("error", () => {});
          const tlsSocket = scope ? tlsSocketOf(conn) : null;
          // TLS 1.3 sends its tickets after the handshake, usually before the EHLO that
          // follows STARTTLS is answered (so before this): keep the one there is, then each
          // later one in its place.
          const ticket = tlsSocket?.getSession();
          if (ticket) sessions!.cache.put(scope!, ticket);
          tlsSocket?.on("session", (later: Buffer) => sessions!.cache.put(scope!, later));
          resolve(new SmtpClient(conn, endpoint, tlsSocket?.isSessionReused() ?? false, opts.localAddress ?? null));
        };
        if (!endpoint.auth) return ready();
        conn.login({ user: endpoint.auth.user, pass: endpoint.auth.pass }, (err) => (err ? fail(err) : ready()));
      });
    });
  }

  /** One transaction; a refusal is a result with its code, not a throw. */
  send(from: string, to: string, raw: Buffer): Promise<TransactionResult> {
    return new Promise<TransactionResult>((resolve) => {
      this.conn.send({ from, to: [to] }, raw, (err, info) => {
        if (!err) return resolve({ code: replyCode(info.response) ?? 250, response: info.response });
        const e = err as Error & {
          response?: string;
          responseCode?: number;
          rejectedErrors?: { response?: string; responseCode?: number }[];
        };
        const rejected = e.rejectedErrors?.[0];
        const response = rejected?.response ?? e.response ?? e.message;
        resolve({ code: rejected?.responseCode ?? e.responseCode ?? replyCode(response), response });
      });
    }).then((result) => {
      if (result.code === null || result.code < 200 || result.code >= 300) this.sawError = true;
      return result;
    });
  }

  /** Clears a failed transaction so the connection can carry the next one. */
  reset(): Promise<boolean> {
    return new Promise((resolve) =>
      this.conn.reset((err) => {
        if (err) this.sawError = true;
        resolve(!err);
      }),
    );
  }

  /** Ends the session: QUIT, and the socket closes on the server's 221 (or after QUIT_REPLY_TIMEOUT_MS). */
  close(): void {
    if (this.closing) return;
    const live = this.usable;
    this.closing = true;
    if (!live) return this.conn.close();
    this.conn.quit();
    const timer = setTimeout(() => this.conn.close(), QUIT_REPLY_TIMEOUT_MS);
    timer.unref?.();
    this.conn.once("end", () => clearTimeout(timer));
  }
}
