// A real SMTP server on loopback standing in for remote MX hosts (and smarthosts): it
// records every transaction and answers as the test scripts it, per recipient and attempt.
import { SMTPServer } from "smtp-server";

export interface SinkMessage {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  helo: string;
  tls: boolean;
  user: string | null;
  /** The address the client connected from (a pool's source address, issue 29). */
  remoteAddress: string;
  /** When the sink took the message (Date.now()). */
  receivedAtMs: number;
}

/** What the sink does with one recipient: accept, refuse (at RCPT or after DATA), or hang up. */
export type SinkAnswer = "accept" | "drop" | { code: number; text: string; at?: "rcpt" | "data" };

export class SmtpSink {
  readonly messages: SinkMessage[] = [];
  /** SMTP connections accepted so far. */
  connections = 0;
  /** Connections open now, and the most open at once so far. */
  open = 0;
  maxOpen = 0;
  /** The same per client address (a pool's source address, issue 29). */
  readonly openFrom = new Map<string, number>();
  readonly maxOpenFrom = new Map<string, number>();
  /** How long the sink takes to answer each message's final dot (a destination that works hard). */
  dataDelayMs = 0;
  /** When each MAIL FROM arrived (Date.now()), in order: when each transaction started. */
  readonly mailFromAtMs: number[] = [];
  /** Attempts seen per recipient (lowercase). */
  readonly attempts = new Map<string, number>();
  /** The answer for a recipient on its n-th attempt (1-based); default: accept. */
  script: (rcpt: string, attempt: number) => SinkAnswer = () => "accept";

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  /** `tls`: offer STARTTLS with this certificate (off by default: a server that offers no TLS). `host`: where it listens (127.0.0.1; "::" for both families). */
  static async start(
    opts: { auth?: { user: string; pass: string }; tls?: { key: string; cert: string }; host?: string } = {},
  ): Promise<SmtpSink> {
    let self: SmtpSink | null = null;
    const answerFor = (rcpt: string, count: boolean) => {
      const key = rcpt.toLowerCase();
      const n = (self!.attempts.get(key) ?? 0) + (count ? 1 : 0);
      if (count) self!.attempts.set(key, n);
      return self!.script(rcpt, n);
    };
    /** Sessions onConnect counted as open: onClose uncounts only those. */
    const counted = new WeakSet<object>();
    const server = new SMTPServer({
      authOptional: !opts.auth,
      allowInsecureAuth: true,
      disabledCommands: [...(opts.auth ? [] : ["AUTH"]), ...(opts.tls ? [] : ["STARTTLS"])],
      ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : { hideSTARTTLS: true }),
      logger: false,
      onConnect(session, cb) {
        counted.add(session);
        self!.connections++;
        self!.open++;
        self!.maxOpen = Math.max(self!.maxOpen, self!.open);
        const from = session.remoteAddress.replace(/^::ffff:/, "");
        const n = (self!.openFrom.get(from) ?? 0) + 1;
        self!.openFrom.set(from, n);
        self!.maxOpenFrom.set(from, Math.max(self!.maxOpenFrom.get(from) ?? 0, n));
        cb();
      },
      onClose(session) {
        // A socket closed before its greeting (a client killed with -9) reaches onClose without
        // having reached onConnect, and without a remoteAddress: it was never counted open.
        if (!counted.delete(session)) return;
        self!.open--;
        const from = session.remoteAddress.replace(/^::ffff:/, "");
        self!.openFrom.set(from, (self!.openFrom.get(from) ?? 1) - 1);
      },
      onAuth(auth, _s, cb) {
        if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) return cb(null, { user: auth.username });
        cb(Object.assign(new Error("bad credentials"), { responseCode: 535 }));
      },
      onMailFrom(_address, _session, cb) {
        self!.mailFromAtMs.push(Date.now());
        cb();
      },
      onRcptTo(address, session, cb) {
        const answer = answerFor(address.address, true);
        if (answer === "drop") {
          (session as unknown as { _sinkDrop?: boolean })._sinkDrop = true;
          return cb();
        }
        if (answer !== "accept" && answer.at === "rcpt") return cb(Object.assign(new Error(answer.text), { responseCode: answer.code }));
        cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          const rcpts = session.envelope.rcptTo.map((r) => r.address);
          if ((session as unknown as { _sinkDrop?: boolean })._sinkDrop) {
            // Hang up without answering the final dot, as a crashing server would.
            (server as unknown as { connections: Set<{ _socket: { destroy(): void } }> }).connections.forEach((c) => {
              c._socket.destroy();
            });
            return;
          }
          const answer = answerFor(rcpts[0]!, false);
          if (answer !== "accept" && answer !== "drop" && answer.at !== "rcpt")
            return cb(Object.assign(new Error(answer.text), { responseCode: answer.code }));
          self!.messages.push({
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            rcptTo: rcpts,
            raw: Buffer.concat(chunks).toString("utf8"),
            helo: session.hostNameAppearsAs,
            tls: session.secure,
            user: (session.user as string | undefined) ?? null,
            remoteAddress: session.remoteAddress.replace(/^::ffff:/, ""),
            receivedAtMs: Date.now(),
          });
          if (self!.dataDelayMs > 0) setTimeout(() => cb(null, "OK queued as sink"), self!.dataDelayMs);
          else cb(null, "OK queued as sink");
        });
      },
    });
    // A client that dies (kill -9) can leave a reset connection behind, which smtp-server
    // reports as an 'error' event: a real MX shrugs that off, and so does the sink.
    server.on("error", () => {});
    await new Promise<void>((resolve) => server.listen(0, opts.host ?? "127.0.0.1", () => resolve()));
    self = new SmtpSink(server, (server.server.address() as { port: number }).port);
    return self;
  }

  /** The messages delivered to `rcpt`. */
  to(rcpt: string): SinkMessage[] {
    return this.messages.filter((m) => m.rcptTo.some((r) => r.toLowerCase() === rcpt.toLowerCase()));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls `check` until it returns a value (not undefined/false) or the time runs out. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** The MX host the tests' recipient domains point at: 127.0.0.1, where the sink listens (on the config's mx_port). */
export const SINK_MX = "mx.sink.test";

/** Publishes in `dns` an MX to SINK_MX for each domain, and SINK_MX's address. */
export function routeToSink(dns: { set(name: string, records: unknown[]): void }, ...domains: string[]): void {
  for (const domain of domains) dns.set(domain, [{ type: "MX", exchange: SINK_MX, priority: 10 }]);
  dns.set(SINK_MX, [{ type: "A", address: "127.0.0.1" }]);
}
