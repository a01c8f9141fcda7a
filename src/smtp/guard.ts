// Holds every session of an smtp-server listener to the limits of limits.ts: thin
// glue between the connections server-compat.ts shows (the open connections, the
// command names, the DATA bytes, whether the client waits for us) and the decisions.
// A listener guardSessions() was not called on (the test sinks, for instance) is untouched.
//
// The limits and smtp-server's own options (max_connections, socket_timeout, max
// recipients, message size) are read from the current config when a connection opens, so
// a SIGHUP reload reaches every session opened after it.
import type { Socket } from "node:net";
import type { SMTPServer, SMTPServerSession } from "smtp-server";
import { assertSmtpServerVersion, type ConnectionView, hookConnections, type DataWatch } from "./server-compat.ts";
import type { Logger } from "../lib/logger.ts";
import {
  authTimeReply,
  authVerdict,
  clientKey,
  commandVerdict,
  connectionVerdict,
  dataRateVerdict,
  deadlineAction,
  sessionTimeReply,
  type SessionLimits,
} from "./limits.ts";
import type { SmtpReply } from "./reply.ts";

/** smtp-server options that are read at use, refreshed at every new connection. */
export interface LiveServerOptions {
  maxClients: number;
  socketTimeout: number;
  maxRecipients: number;
  size: number;
  allowInsecureAuth?: boolean;
}

export interface GuardOptions {
  /** The limits from the current config. */
  limits(): SessionLimits;
  /** smtp-server's own limits from the current config. */
  serverOptions(): LiveServerOptions;
  /** Submission: AUTH only over TLS unless this says so. Absent: AUTH is not this guard's business. */
  allowInsecureAuth?(): boolean;
  /**
   * A DATA command that smtp-server is about to accept (there are recipients): a reply
   * refuses it before the 354, so the client sends no message (the memory budget); a
   * promise makes the client wait for the verdict (room in the budget). When it comes
   * to null, the listener's onData runs next, synchronously, for this session.
   */
  beforeData?(session: SMTPServerSession): SmtpReply | null | Promise<SmtpReply | null>;
  /** The session's connection closed (what it held for a DATA that never started is given back). */
  sessionClosed?(session: SMTPServerSession): void;
  /**
   * Whether the session's message waits for memory (the listener paused its stream): the
   * client is not slow, we are not reading, so min_data_rate measures from when we read again.
   */
  dataPaused?(session: SMTPServerSession): boolean;
  logger: Logger;
  /** A session closed (or a connection dropped) by the limit named, as logged (/metrics). */
  limited?(limit: string): void;
}

interface ConnectionState {
  key: string;
  limits: SessionLimits;
  junk: number;
  transactions: number;
  timers: Set<ReturnType<typeof setTimeout>>;
  /** The DATA being measured: its bytes read and the time at its window's start. */
  data: { watch: DataWatch; bytes: number; since: number } | null;
}

const states = new WeakMap<ConnectionView, ConnectionState>();
// setTimeout fires at once past 2^31 - 1 ms (24.8 days): longer limits are that long.
const MAX_TIMER_MS = 2 ** 31 - 1;

class Guard {
  constructor(private readonly opts: GuardOptions) {}

  /** Before smtp-server's init(), which checks max_connections: today's options. */
  refresh(c: ConnectionView): void {
    c.setServerOptions(this.opts.serverOptions());
  }

  /** After init(): the per-client count, then the session's deadlines. */
  opened(c: ConnectionView): void {
    if (c.closing()) return; // refused by max_connections already
    const limits = this.opts.limits();
    const state: ConnectionState = {
      key: clientKey(c.remoteAddress),
      limits,
      junk: 0,
      transactions: c.transactions(),
      timers: new Set(),
      data: null,
    };
    states.set(c, state);
    const keys = (function* () {
      for (const other of c.peers()) {
        const s = states.get(other);
        if (s && !other.closing()) yield s.key;
      }
    })();
    const refusal = connectionVerdict(keys, state.key, limits.maxConnectionsPerIp);
    if (refusal) return this.close(c, refusal, "max_connections_per_ip");
    this.at(c, limits.maxSessionMs, () => sessionTimeReply(limits.maxSessionMs), "max_session_time");
    if (limits.authTimeoutMs !== null) {
      const authMs = limits.authTimeoutMs;
      this.at(c, authMs, () => (c.session.user ? null : authTimeReply(authMs)), "auth_timeout");
    }
  }

  /** A socket waiting for its implicit-TLS handshake: past the per-client limit with the others? */
  tooManyWaiting(socket: Socket, waiting: Iterable<string>, open: Iterable<ConnectionView>): boolean {
    const limits = this.opts.limits();
    const key = clientKey(socket.remoteAddress ?? "");
    const keys = (function* () {
      for (const address of waiting) yield clientKey(address);
      yield key;
      for (const c of open) {
        const s = states.get(c);
        if (s && !c.closing()) yield s.key;
      }
    })();
    if (!connectionVerdict(keys, key, limits.maxConnectionsPerIp)) return false;
    this.opts.logger.info("smtp session closed by a limit", {
      limit: "max_connections_per_ip",
      ip: socket.remoteAddress,
      tls: "handshake",
    });
    this.opts.limited?.("max_connections_per_ip");
    return true;
  }

  closed(c: ConnectionView): void {
    this.opts.sessionClosed?.(c.session);
    const state = states.get(c);
    if (!state) return;
    for (const t of state.timers) clearTimeout(t);
    state.timers.clear();
  }

  /** A command (not a line of an AUTH exchange): the junk count, reset by every message. */
  command(c: ConnectionView, name: string): SmtpReply | null {
    const state = states.get(c);
    if (!state) return null;
    if (c.transactions() !== state.transactions) {
      state.transactions = c.transactions();
      state.junk = 0;
    }
    const { junk, refusal } = commandVerdict(state.junk, name, state.limits.maxJunkCommands);
    state.junk = junk;
    if (refusal) this.logLimit(c, "max_junk_commands");
    return refusal;
  }

  /** Before a DATA that will start: the listener's verdict (see GuardOptions.beforeData). */
  data(c: ConnectionView): SmtpReply | null | Promise<SmtpReply | null> {
    if (!this.opts.beforeData || !c.reading() || c.session.envelope.rcptTo.length === 0) return null;
    return this.opts.beforeData(c.session);
  }

  /** Submission: AUTH is listed only where it may be used (over TLS, or allow_insecure_auth). */
  offerAuth(c: ConnectionView): boolean {
    if (!this.opts.allowInsecureAuth) return true;
    return c.secure || this.opts.allowInsecureAuth();
  }

  auth(c: ConnectionView): SmtpReply | null {
    if (!this.opts.allowInsecureAuth) return null;
    const refusal = authVerdict({
      secure: c.secure,
      starttlsOffered: c.starttlsOffered(),
      allowInsecureAuth: this.opts.allowInsecureAuth(),
    });
    if (refusal) this.opts.logger.info("smtp auth refused without tls", { session_id: c.session.id, ip: c.remoteAddress });
    return refusal;
  }

  /**
   * DATA has started: its bytes are measured over every window until the message is in.
   * One timer per connection at most, kept across its messages (a busy connection sends
   * many a second; a timer each would pile up for a window).
   */
  dataStarted(c: ConnectionView): void {
    const state = states.get(c);
    const watch = c.dataWatch();
    if (!state || !watch || state.limits.minDataRate <= 0) return;
    const running = state.data !== null;
    state.data = { watch, bytes: watch.bytesRead(), since: performance.now() };
    if (running) return;
    const { minDataRate, dataRateWindowMs } = state.limits;
    const tick = () => {
      const data = state.data;
      if (!data?.watch.active()) {
        state.data = null;
        return;
      }
      const now = performance.now();
      if (this.opts.dataPaused?.(c.session)) {
        data.bytes = data.watch.bytesRead();
        data.since = now;
        return void this.timer(state, dataRateWindowMs, tick);
      }
      // A window not yet full (DATA started after this timer did): measure it at its end.
      if (now - data.since < dataRateWindowMs) return void this.timer(state, dataRateWindowMs - (now - data.since), tick);
      const read = data.watch.bytesRead();
      const refusal = dataRateVerdict(read - data.bytes, now - data.since, minDataRate);
      if (refusal) {
        state.data = null;
        return this.close(c, refusal, "min_data_rate", { bytes: read - data.bytes, ms: Math.round(now - data.since) });
      }
      data.bytes = read;
      data.since = now;
      this.timer(state, dataRateWindowMs, tick);
    };
    this.timer(state, dataRateWindowMs, tick);
  }

  /** A deadline `ms` after now: its reply (if it still has one) once the client owes us input. */
  private at(c: ConnectionView, ms: number, replyOf: () => SmtpReply | null, limit: string): void {
    const state = states.get(c)!;
    const fire = () => {
      if (c.closing()) return;
      const refusal = replyOf();
      if (!refusal) return;
      if (deadlineAction(c.waitingForUs()) === "wait") return void this.timer(state, 1000, fire);
      this.close(c, refusal, limit);
    };
    this.timer(state, ms, fire);
  }

  private timer(state: ConnectionState, ms: number, run: () => void): ReturnType<typeof setTimeout> {
    const t = setTimeout(
      () => {
        state.timers.delete(t);
        run();
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    t.unref?.();
    state.timers.add(t);
    return t;
  }

  /** Sends a 421 (smtp-server closes the connection after any 421). */
  private close(c: ConnectionView, r: SmtpReply, limit: string, fields: Record<string, unknown> = {}): void {
    this.logLimit(c, limit, fields);
    c.reply(r);
  }

  private logLimit(c: ConnectionView, limit: string, fields: Record<string, unknown> = {}): void {
    this.opts.logger.info("smtp session closed by a limit", { limit, session_id: c.session.id, ip: c.remoteAddress, ...fields });
    this.opts.limited?.(limit);
  }
}

/** Holds every session of `server` to the limits; call once, right after creating it. */
export function guardSessions(server: SMTPServer, opts: GuardOptions): void {
  assertSmtpServerVersion();
  const guard = new Guard(opts);
  hookConnections(server, {
    beforeInit: (c) => guard.refresh(c),
    opened: (c) => guard.opened(c),
    closed: (c) => guard.closed(c),
    command: (c, name) => guard.command(c, name),
    auth: (c) => guard.auth(c),
    offerAuth: (c) => guard.offerAuth(c),
    data: (c) => guard.data(c),
    dataStarted: (c) => guard.dataStarted(c),
    // One client could hold every handshake slot (smtp-server lets max_connections wait):
    // the per-client limit counts the sockets waiting too.
    acceptHandshake: (socket, waiting, open) => !guard.tooManyWaiting(socket, waiting, open),
  });
}
