// TLS sessions of the servers we deliver to, kept so that the next connection to the same
// server resumes its session (an abbreviated handshake: no certificate exchange and no
// key agreement on RSA, about half the CPU of a full one on both ends) as Postfix's
// smtp_tls_session_cache does.
//
// A session is reused only under the same TLS requirement it was made under: one made
// opportunistically (no certificate check) must never stand in for the verified handshake
// that MTA-STS or a private CA asks for, because a resumed session is not checked again.
import { BoundedCache } from "../../lib/bounded-cache.ts";

/** Which server, and under which checks, a session belongs to. */
export interface SessionScope {
  /** The MX host name (SNI). */
  host: string;
  ip: string;
  port: number;
  /** "opportunistic" | "encrypt" | "verify", and for "verify" the private roots' identity. */
  checks: string;
}

export const sessionKey = (s: SessionScope): string => `${s.checks} ${s.host.toLowerCase()} ${s.ip}:${s.port}`;

export class TlsSessionCache {
  private readonly sessions: BoundedCache<string, Buffer> | null;

  /** `maxEntries` 0 turns resumption off. */
  constructor(maxEntries: number) {
    this.sessions = maxEntries > 0 ? new BoundedCache(maxEntries) : null;
  }

  get(scope: SessionScope): Buffer | undefined {
    return this.sessions?.get(sessionKey(scope));
  }

  /** The server's latest ticket for this scope (TLS 1.3 sends them after the handshake, and may send several). */
  put(scope: SessionScope, session: Buffer): void {
    this.sessions?.set(sessionKey(scope), session);
  }

  /** A session the server would not resume (or a connection that failed with it) is not offered again. */
  forget(scope: SessionScope): void {
    this.sessions?.delete(sessionKey(scope));
  }
}
