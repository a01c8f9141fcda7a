// The one module that reaches into smtp-server's internals. smtp-server gives no
// per-connection hooks for what the session limits need (guard.ts): a connection
// opening and closing, each command before it runs, AUTH and DATA before their handlers,
// the bytes of a DATA as they come, whether the client is waiting for us, and the sockets
// still in their TLS handshake. So its SMTPConnection prototype is wrapped once here, and
// the server's _acceptSocket per listener, and everything else sees a ConnectionView.
//
// These are private members: they hold for the version below only. The listeners call
// assertSmtpServerVersion() at start, and test/smtp/server-patch.test.ts fails when the
// installed smtp-server is another version; an upgrade reads this file against the new one.
import type { Socket } from "node:net";
import type { SMTPServer, SMTPServerSession } from "smtp-server";
import pkg from "smtp-server/package.json" with { type: "json" };
import { SMTPConnection } from "smtp-server/lib/smtp-connection.js";
import { smtpServerText, type SmtpReply } from "./reply.ts";

/** The smtp-server whose internals this module was written against. */
export const SMTP_SERVER_VERSION = "3.21.6";

/** Throws unless the smtp-server in use is the one this module knows. */
export function assertSmtpServerVersion(installed: string = pkg.version): void {
  if (installed !== SMTP_SERVER_VERSION) {
    throw new Error(
      `smtp-server ${installed} is installed, but src/smtp/server-compat.ts was written for ${SMTP_SERVER_VERSION}: check its hooks against the new version`,
    );
  }
}

interface Parser {
  _dataMode?: boolean;
  dataBytes?: number;
}

// The parts of smtp-server's SMTPConnection read here (all plain fields or methods).
interface Connection {
  _server: { options: Record<string | symbol, unknown>; connections: Set<Connection> };
  _socket: { bytesRead?: number; destroyed?: boolean; cork(): void; uncork(): void };
  /** The socket whose replies are held now (holdReplies), if any. */
  __heldSocket?: { uncork(): void; destroyed?: boolean };
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
  send(code: number, data: string | string[], context?: unknown): void;
  _isSupported(command: string): boolean;
}

interface AcceptingServer {
  _pendingSockets: Map<Socket, unknown>;
  connections: Set<Connection>;
  _acceptSocket(socket: Socket, handshake: boolean): (() => void) | false;
}

/** A DATA being received: its bytes so far, while it lasts. */
export interface DataWatch {
  /** False once the connection closed or this DATA ended. */
  active(): boolean;
  bytesRead(): number;
}

/** One connection of a listener, as the session limits see it. */
export class ConnectionView {
  constructor(private readonly c: Connection) {}

  get remoteAddress(): string {
    return this.c.remoteAddress;
  }
  get session(): SMTPServerSession {
    return this.c.session;
  }
  get secure(): boolean {
    return this.c.secure;
  }
  closing(): boolean {
    return this.c._closing || this.c._closed;
  }
  /** Messages begun on this connection (RSET and a new MAIL count). */
  transactions(): number {
    return this.c._transactionCounter;
  }
  /** The listener's other open connections, this one included. */
  *peers(): Generator<ConnectionView> {
    for (const other of this.c._server.connections) yield viewOf(other);
  }
  /** smtp-server options read at use: set for this connection before it starts. */
  setServerOptions(options: object): void {
    Object.assign(this.c._server.options, options);
  }
  /** Whether STARTTLS is offered on this connection now. */
  starttlsOffered(): boolean {
    return this.c._isSupported("STARTTLS") && !this.c._server.options.hideSTARTTLS;
  }
  /** The connection reads commands (its parser is up). */
  reading(): boolean {
    return Boolean(this.c._parser);
  }
  /** The DATA that has just started, or null when none is being received. */
  dataWatch(): DataWatch | null {
    const c = this.c;
    const parser = c._parser;
    // biome-ignore lint/complexity/useOptionalChain: parser may be `false`, which `?.` does not narrow away
    if (!parser || !parser._dataMode) return null;
    return {
      active: () => !c._closing && !c._closed && c._parser === parser && Boolean(parser._dataMode),
      bytesRead: () => (typeof c._socket.bytesRead === "number" ? c._socket.bytesRead : (parser.dataBytes ?? 0)),
    };
  }
  /** What smtp-server's own idle timeout counts as the client waiting for us. */
  waitingForUs(): boolean {
    const c = this.c;
    return Boolean(c._handlerPending || (c._dataStream && c._parser && !c._parser._dataMode));
  }
  /** Sends a reply (smtp-server closes the connection after any 421). */
  reply(r: SmtpReply): void {
    this.c.send(r.code, smtpServerText(r));
  }
}

const views = new WeakMap<Connection, ConnectionView>();
function viewOf(c: Connection): ConnectionView {
  let view = views.get(c);
  if (!view) views.set(c, (view = new ConnectionView(c)));
  return view;
}

/** What a listener hears of its connections. A reply refuses the command it answers. */
export interface ConnectionHooks {
  /** Before smtp-server's init(), which checks max_connections. */
  beforeInit(c: ConnectionView): void;
  /** After init(), the greeting on its way. */
  opened(c: ConnectionView): void;
  closed(c: ConnectionView): void;
  /** A command line (not a line of an AUTH exchange), before it runs. */
  command(c: ConnectionView, name: string): SmtpReply | null;
  auth(c: ConnectionView): SmtpReply | null;
  /** Whether EHLO lists AUTH on this connection now (false: the AUTH line is left out). */
  offerAuth(c: ConnectionView): boolean;
  /** A DATA command, before smtp-server's handler: a refusal, none, or a wait for the verdict (the client waits for our answer). */
  data(c: ConnectionView): SmtpReply | null | Promise<SmtpReply | null>;
  /** After smtp-server's DATA handler ran (the 354 is sent when it accepted). */
  dataStarted(c: ConnectionView): void;
  /**
   * A socket about to wait for its implicit-TLS handshake, with the addresses of those
   * already waiting: false drops it.
   */
  acceptHandshake(socket: Socket, waiting: Iterable<string>, open: Iterable<ConnectionView>): boolean;
}

// RFC 2920 section 3.2: the replies to a pipelined group (RSET, MAIL, RCPT, and the DATA
// that ends it) are held and sent as a unit, one write where there were one per command
// (a write was ~17 µs of the main thread's time on bench:inbound). They go at the end of
// the event loop's turn, or before any other command runs (STARTTLS, QUIT: nothing is
// held across an upgrade or a close), whichever comes first.
const HELD_REPLIES = new Set(["MAIL", "RCPT", "RSET", "DATA"]);

function holdReplies(c: Connection): void {
  if (c.__heldSocket) return;
  const socket = c._socket;
  socket.cork();
  c.__heldSocket = socket;
  setImmediate(() => releaseReplies(c));
}

function releaseReplies(c: Connection): void {
  const socket = c.__heldSocket;
  if (!socket) return;
  c.__heldSocket = undefined;
  // A socket gone meanwhile has no one to read what was held.
  if (!socket.destroyed) socket.uncork();
}

const HOOKS = Symbol.for("postroom.smtpConnectionHooks");
const hooksOf = (c: Connection): ConnectionHooks | undefined => c._server.options[HOOKS] as ConnectionHooks | undefined;

interface Proto {
  init(this: Connection): void;
  _onClose(this: Connection): void;
  _onCommand(this: Connection, command: Buffer | string, callback?: () => void): void;
  handler_AUTH(this: Connection, command: Buffer | string, callback: () => void): void;
  handler_EHLO(this: Connection, command: Buffer | string, callback: () => void): void;
  handler_DATA(this: Connection, command: Buffer | string, callback: () => void): void;
  __postroomHooks?: boolean;
}

// Wrapped once for the process; a listener without hooks (a test sink) is untouched.
const proto = SMTPConnection.prototype as unknown as Proto;
const originalSend = (SMTPConnection.prototype as unknown as Connection).send;
if (!proto.__postroomHooks) {
  const { init, _onClose, _onCommand, handler_AUTH, handler_EHLO, handler_DATA } = proto;
  proto.init = function () {
    const hooks = hooksOf(this);
    hooks?.beforeInit(viewOf(this));
    init.call(this);
    hooks?.opened(viewOf(this));
  };
  proto._onClose = function () {
    _onClose.call(this);
    hooksOf(this)?.closed(viewOf(this));
  };
  proto._onCommand = function (command, callback) {
    const hooks = hooksOf(this);
    // A line of an AUTH exchange is no command; nor is anything before the greeting or
    // after the connection started closing (smtp-server answers those itself).
    if (hooks && !this._nextHandler && !this._closing) {
      const name = (command || "").toString().split(" ")[0]!.toUpperCase();
      if (HELD_REPLIES.has(name)) holdReplies(this);
      else releaseReplies(this);
      const refusal = hooks.command(viewOf(this), name);
      if (refusal) return this.send(refusal.code, smtpServerText(refusal));
    }
    return _onCommand.call(this, command, callback);
  };
  proto.handler_AUTH = function (command, callback) {
    const refusal = hooksOf(this)?.auth(viewOf(this));
    if (!refusal) return handler_AUTH.call(this, command, callback);
    this.send(refusal.code, smtpServerText(refusal));
    callback();
  };
  // smtp-server lists AUTH whenever it takes the command, TLS or not (allowInsecureAuth
  // only decides whether AUTH then answers 538): a client believes the list and sends its
  // password before it learns. Where the hook says no, the EHLO reply (written at once, in
  // this call) goes out without its AUTH line; AUTH itself stays a command, so MAIL still
  // needs it and AUTH in clear still gets 538.
  proto.handler_EHLO = function (command, callback) {
    const hooks = hooksOf(this);
    if (!hooks || hooks.offerAuth(viewOf(this))) return handler_EHLO.call(this, command, callback);
    const own = this as Connection & { send: Connection["send"] };
    own.send = (code, data, context) =>
      originalSend.call(this, code, Array.isArray(data) ? data.filter((l) => !/^AUTH\b/i.test(l)) : data, context);
    try {
      handler_EHLO.call(this, command, callback);
    } finally {
      delete (own as { send?: unknown }).send;
    }
  };
  proto.handler_DATA = function (command, callback) {
    const hooks = hooksOf(this);
    const go = (refusal: SmtpReply | null) => {
      // The client left while DATA waited: nothing to answer.
      if (this._closing || this._closed) return callback();
      if (refusal) {
        this.send(refusal.code, smtpServerText(refusal));
        return callback();
      }
      handler_DATA.call(this, command, callback);
      hooks?.dataStarted(viewOf(this));
    };
    const verdict = hooks?.data(viewOf(this)) ?? null;
    if (verdict instanceof Promise) void verdict.then(go, () => go(null));
    else go(verdict);
  };
  proto.__postroomHooks = true;
}

/** Gives `server`'s connections to `hooks`; call once, right after creating it. */
export function hookConnections(server: SMTPServer, hooks: ConnectionHooks): void {
  (server.options as unknown as Record<symbol, unknown>)[HOOKS] = hooks;
  // On implicit TLS a socket waits for its handshake (up to socket_timeout) before it is a
  // connection; nothing can be written to it before, so one refused is dropped.
  const internals = server as unknown as AcceptingServer;
  const accept = internals._acceptSocket.bind(server);
  internals._acceptSocket = (socket, handshake) => {
    if (handshake) {
      const waiting = (function* () {
        for (const s of internals._pendingSockets.keys()) yield s.remoteAddress ?? "";
      })();
      const open = (function* () {
        for (const c of internals.connections) yield viewOf(c);
      })();
      if (!hooks.acceptHandshake(socket, waiting, open)) {
        socket.on("error", () => {});
        socket.destroy();
        return false;
      }
    }
    return accept(socket, handshake);
  };
}
