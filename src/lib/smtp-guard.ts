// Holds every session of an smtp-server listener to the limits of smtp-limits.ts: thin
// glue around smtp-server's connection object, which is where the information is (the
// open connections, the command names, the DATA bytes, whether the client waits for us).
// smtp-server gives no per-connection hook for these, so its SMTPConnection prototype is
// wrapped once; the wrappers do nothing for a listener that guardSessions() was not
// called on (the test sinks, for instance).
//
// The limits and smtp-server's own options (max_connections, socket_timeout, max
// recipients, message size) are read from the current config when a connection opens, so
// a SIGHUP reload reaches every session opened after it.
import type { Socket } from "node:net";
import type { SMTPServer, SMTPServerSession } from "smtp-server";
import { SMTPConnection } from "smtp-server/lib/smtp-connection.js";
import type { Logger } from "./logger.ts";
import { authTimeReply, authVerdict, clientKey, commandVerdict, connectionVerdict, dataRateVerdict, deadlineAction, sessionTimeReply, type SessionLimits } from "./smtp-limits.ts";
import { smtpServerText, type SmtpReply } from "./smtp-reply.ts";

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
   * refuses it before the 354, so the client sends no message (the memory budget). When
   * it returns null, the listener's onData runs next, synchronously, for this session.
   */
  beforeData?(session: SMTPServerSession): SmtpReply | null;
  logger: Logger;
  /** A session closed (or a connection dropped) by the limit named, as logged (/metrics). */
  limited?(limit: string): void;
}

interface Parser {
  _dataMode?: boolean;
  dataBytes?: number;
}

// The parts of smtp-server's SMTPConnection the guard reads (all plain fields or methods).
interface Connection {
  _server: { options: Record<string | symbol, unknown>; connections: Set<Connection> };
  _socket: { bytesRead?: number };
  _parser: Parser | false;
  _dataStream: unknown;
  _handlerPending?: boolean;
  _nextHandler: unknown;
  _closing: boolean;
  _closed: boolean;
  _transactionCounter: number;
  secure: boolean;
  remoteAddress: string;
  session: SMTPServerSession;
  send(code: number, data: string, context?: unknown): void;
  _isSupported(command: string): boolean;
}

interface AcceptingServer {
  _pendingSockets: Map<Socket, unknown>;
  connections: Set<Connection>;
  _acceptSocket(socket: Socket, handshake: boolean): (() => void) | false;
}

interface ConnectionState {
  key: string;
  limits: SessionLimits;
  junk: number;
  transactions: number;
  timers: Set<ReturnType<typeof setTimeout>>;
  /** The DATA being measured: its parser, the bytes read and the time at its window's start. */
  data: { parser: Parser; bytes: number; since: number; bytesNow: () => number } | null;
}

const GUARD = Symbol.for("postroom.smtpGuard");
const states = new WeakMap<Connection, ConnectionState>();
// setTimeout fires at once past 2^31 - 1 ms (24.8 days): longer limits are that long.
const MAX_TIMER_MS = 2 ** 31 - 1;

class Guard {
  constructor(private readonly opts: GuardOptions) {}

  /** Before smtp-server's init(), which checks max_connections: today's options. */
  refresh(c: Connection): void {
    const live = this.opts.serverOptions();
    Object.assign(c._server.options, live);
  }

  /** After init(): the per-client count, then the session's deadlines. */
  opened(c: Connection): void {
    if (c._closing || c._closed) return; // refused by max_connections already
    const limits = this.opts.limits();
    const state: ConnectionState = { key: clientKey(c.remoteAddress), limits, junk: 0, transactions: c._transactionCounter, timers: new Set(), data: null };
    states.set(c, state);
    const keys = (function* () {
      for (const other of c._server.connections) {
        const s = states.get(other);
        if (s && !other._closing) yield s.key;
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
  tooManyWaiting(server: AcceptingServer, socket: Socket): boolean {
    const limits = this.opts.limits();
    const key = clientKey(socket.remoteAddress ?? "");
    const keys = (function* () {
      for (const waiting of server._pendingSockets.keys()) yield clientKey(waiting.remoteAddress ?? "");
      yield key;
      for (const c of server.connections) {
        const s = states.get(c);
        if (s && !c._closing) yield s.key;
      }
    })();
    if (!connectionVerdict(keys, key, limits.maxConnectionsPerIp)) return false;
    this.opts.logger.info("smtp session closed by a limit", { limit: "max_connections_per_ip", ip: socket.remoteAddress, tls: "handshake" });
    this.opts.limited?.("max_connections_per_ip");
    return true;
  }

  closed(c: Connection): void {
    const state = states.get(c);
    if (!state) return;
    for (const t of state.timers) clearTimeout(t);
    state.timers.clear();
  }

  /** A command (not a line of an AUTH exchange): the junk count, reset by every message. */
  command(c: Connection, name: string): SmtpReply | null {
    const state = states.get(c);
    if (!state) return null;
    if (c._transactionCounter !== state.transactions) {
      state.transactions = c._transactionCounter;
      state.junk = 0;
    }
    const { junk, refusal } = commandVerdict(state.junk, name, state.limits.maxJunkCommands);
    state.junk = junk;
    if (refusal) this.logLimit(c, "max_junk_commands");
    return refusal;
  }

  /** Before a DATA that will start: the listener's verdict (see GuardOptions.beforeData). */
  data(c: Connection): SmtpReply | null {
    if (!this.opts.beforeData || !c._parser || c.session.envelope.rcptTo.length === 0) return null;
    return this.opts.beforeData(c.session);
  }

  auth(c: Connection): SmtpReply | null {
    if (!this.opts.allowInsecureAuth) return null;
    const refusal = authVerdict({ secure: c.secure, starttlsOffered: c._isSupported("STARTTLS") && !c._server.options.hideSTARTTLS, allowInsecureAuth: this.opts.allowInsecureAuth() });
    if (refusal) this.opts.logger.info("smtp auth refused without tls", { session_id: c.session.id, ip: c.remoteAddress });
    return refusal;
  }

  /**
   * DATA has started: its bytes are measured over every window until the message is in.
   * One timer per connection at most, kept across its messages (a busy connection sends
   * many a second; a timer each would pile up for a window).
   */
  dataStarted(c: Connection): void {
    const state = states.get(c);
    const parser = c._parser;
    if (!state || !parser || !parser._dataMode || state.limits.minDataRate <= 0) return;
    const bytesNow = () => (typeof c._socket.bytesRead === "number" ? c._socket.bytesRead : (parser.dataBytes ?? 0));
    const running = state.data !== null;
    state.data = { parser, bytes: bytesNow(), since: performance.now(), bytesNow };
    if (running) return;
    const { minDataRate, dataRateWindowMs } = state.limits;
    const tick = () => {
      const data = state.data;
      if (!data || c._closing || c._closed || c._parser !== data.parser || !data.parser._dataMode) {
        state.data = null;
        return;
      }
      const now = performance.now();
      // A window not yet full (DATA started after this timer did): measure it at its end.
      if (now - data.since < dataRateWindowMs) return void this.timer(state, dataRateWindowMs - (now - data.since), tick);
      const read = data.bytesNow();
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
  private at(c: Connection, ms: number, replyOf: () => SmtpReply | null, limit: string): void {
    const state = states.get(c)!;
    const fire = () => {
      if (c._closing || c._closed) return;
      const refusal = replyOf();
      if (!refusal) return;
      // What smtp-server's own idle timeout counts as the client waiting for us.
      const waiting = Boolean(c._handlerPending || (c._dataStream && c._parser && !c._parser._dataMode));
      if (deadlineAction(waiting) === "wait") return void this.timer(state, 1000, fire);
      this.close(c, refusal, limit);
    };
    this.timer(state, ms, fire);
  }

  private timer(state: ConnectionState, ms: number, run: () => void): ReturnType<typeof setTimeout> {
    const t = setTimeout(() => {
      state.timers.delete(t);
      run();
    }, Math.min(ms, MAX_TIMER_MS));
    t.unref?.();
    state.timers.add(t);
    return t;
  }

  /** Sends a 421 (smtp-server closes the connection after any 421). */
  private close(c: Connection, r: SmtpReply, limit: string, fields: Record<string, unknown> = {}): void {
    this.logLimit(c, limit, fields);
    c.send(r.code, smtpServerText(r));
  }

  private logLimit(c: Connection, limit: string, fields: Record<string, unknown> = {}): void {
    this.opts.logger.info("smtp session closed by a limit", { limit, session_id: c.session.id, ip: c.remoteAddress, ...fields });
    this.opts.limited?.(limit);
  }
}

const guardOf = (c: Connection): Guard | undefined => c._server.options[GUARD] as Guard | undefined;

interface Proto {
  init(this: Connection): void;
  _onClose(this: Connection): void;
  _onCommand(this: Connection, command: Buffer | string, callback?: () => void): void;
  handler_AUTH(this: Connection, command: Buffer | string, callback: () => void): void;
  handler_DATA(this: Connection, command: Buffer | string, callback: () => void): void;
  __postroomGuard?: boolean;
}
const proto = SMTPConnection.prototype as unknown as Proto;
if (!proto.__postroomGuard) {
  const { init, _onClose, _onCommand, handler_AUTH, handler_DATA } = proto;
  proto.init = function () {
    const guard = guardOf(this);
    guard?.refresh(this);
    init.call(this);
    guard?.opened(this);
  };
  proto._onClose = function () {
    _onClose.call(this);
    guardOf(this)?.closed(this);
  };
  proto._onCommand = function (command, callback) {
    const guard = guardOf(this);
    // A line of an AUTH exchange is no command; nor is anything before the greeting or
    // after the connection started closing (smtp-server answers those itself).
    if (guard && !this._nextHandler && !this._closing) {
      const name = (command || "").toString().split(" ")[0]!.toUpperCase();
      const refusal = guard.command(this, name);
      if (refusal) return this.send(refusal.code, smtpServerText(refusal));
    }
    return _onCommand.call(this, command, callback);
  };
  proto.handler_AUTH = function (command, callback) {
    const refusal = guardOf(this)?.auth(this);
    if (!refusal) return handler_AUTH.call(this, command, callback);
    this.send(refusal.code, smtpServerText(refusal));
    callback();
  };
  proto.handler_DATA = function (command, callback) {
    const guard = guardOf(this);
    const refusal = guard?.data(this);
    if (refusal) {
      this.send(refusal.code, smtpServerText(refusal));
      return callback();
    }
    handler_DATA.call(this, command, callback);
    guard?.dataStarted(this);
  };
  proto.__postroomGuard = true;
}

/** Holds every session of `server` to the limits; call once, right after creating it. */
export function guardSessions(server: SMTPServer, opts: GuardOptions): void {
  const guard = new Guard(opts);
  (server.options as unknown as Record<symbol, unknown>)[GUARD] = guard;
  // On implicit TLS a socket waits for its handshake (up to socket_timeout) before it is a
  // connection, and smtp-server lets max_connections of them wait: one client could hold
  // every one. The per-client limit counts them too, and drops the one past it (nothing
  // can be written before the handshake).
  const internals = server as unknown as AcceptingServer;
  const accept = internals._acceptSocket.bind(server);
  internals._acceptSocket = (socket, handshake) => {
    if (handshake && guard.tooManyWaiting(internals, socket)) {
      socket.on("error", () => {});
      socket.destroy();
      return false;
    }
    return accept(socket, handshake);
  };
}
