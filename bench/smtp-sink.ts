// The one sink of bench:outbound: Postfix's `smtp-sink` (a C test server from the postfix
// package that accepts every transaction and throws the message away), as a child
// process on loopback. Both Postroom and the private Postfix relay to it, so neither side
// is measured against a slower or faster receiver than the other.
//
// Counting: `smtp-sink -c` writes its running counters ("sess=S quit=Q mesg=M", one
// update per line, ended by "\r") to stdout each time a session ends, QUIT is executed
// or the final "." of a message is received, and flushes them at once. `mesg` is the
// number of messages received so far. Every message in this benchmark has one recipient,
// so it is the number of deliveries. We read the counter as it changes and note the
// time each update arrives, which gives the moment the sink has received the N-th message.
import { connect } from "node:net";
import type { Subprocess } from "bun";
import { processCpuMs, terminate } from "./child.ts";

/** A TCP port on `host` (loopback) that was free a moment ago (for servers that cannot report theirs). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const probe = Bun.listen({ hostname: host, port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Resolves once something on host:port answers with an SMTP 220 greeting. */
export async function waitForGreeting(port: number, timeoutMs: number, what: string, host = "127.0.0.1"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const greeted = await new Promise<boolean>((resolve) => {
      const s = connect({ host, port });
      let buf = "";
      const done = (ok: boolean) => {
        s.destroy();
        resolve(ok);
      };
      s.setEncoding("latin1");
      s.on("data", (c: string) => {
        buf += c;
        if (buf.includes("\n")) {
          // Say goodbye properly so the server does not log a lost connection.
          if (buf.startsWith("220")) s.end("QUIT\r\n");
          done(buf.startsWith("220"));
        }
      });
      s.on("error", () => done(false));
      setTimeout(() => done(false), 1000).unref();
    });
    if (greeted) return;
    if (Date.now() > deadline) throw new Error(`${what} did not greet on ${host}:${port} within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

export class SmtpSinkProcess {
  /** Messages received so far (smtp-sink's `mesg`). */
  count = 0;
  /** SMTP sessions so far (smtp-sink's `sess`). */
  sessions = 0;
  private waiters: { target: number; resolve: (atMs: number) => void }[] = [];
  private stderr = "";

  private constructor(
    private readonly proc: Subprocess<"ignore", "pipe", "pipe">,
    readonly host: string,
    readonly port: number,
  ) {
    void this.pump();
    void (async () => {
      this.stderr = await new Response(proc.stderr).text();
    })();
  }

  /** Starts the sink on a free port of `host`, a loopback address (127.0.0.2 where the sending side must not see itself in it). */
  static async start(host = "127.0.0.1"): Promise<SmtpSinkProcess> {
    const bin = Bun.which("smtp-sink", { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin` });
    if (!bin) throw new Error("smtp-sink not found: install the postfix package (apt-get install postfix)");
    const port = await freePort(host);
    // As root it must be told which user to become; -4: the benchmark is IPv4 loopback only;
    // backlog 256 and at most 256 connections at once (the default), far above what either side opens.
    const user = process.getuid?.() === 0 ? ["-u", "postfix"] : [];
    const proc = Bun.spawn([bin, "-c", "-4", ...user, "-h", "sink.bench.test", `${host}:${port}`, "256"], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const sink = new SmtpSinkProcess(proc, host, port);
    try {
      await waitForGreeting(port, 5000, "smtp-sink", host);
    } catch (err) {
      proc.kill();
      throw new Error(`${(err as Error).message}\n${sink.stderr}`);
    }
    return sink;
  }

  private async pump() {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of this.proc.stdout) {
      const at = performance.now();
      buf += decoder.decode(chunk, { stream: true });
      const parts = buf.split(/[\r\n]/);
      buf = parts.pop() ?? "";
      for (const part of parts) {
        const m = /sess=(\d+)\s+quit=(\d+)\s+mesg=(\d+)/.exec(part);
        if (!m) continue;
        this.sessions = Number(m[1]);
        this.count = Number(m[3]);
      }
      this.waiters = this.waiters.filter((w) => (this.count >= w.target ? (w.resolve(at), false) : true));
    }
  }

  /** performance.now() of the counter update that reached `target` messages. */
  reach(target: number, timeoutMs: number, what: string): Promise<number> {
    if (this.count >= target) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`${what}: the sink counted ${this.count} messages, not ${target}, within ${(timeoutMs / 1000).toFixed(0)} s`));
      }, timeoutMs);
      const done = (at: number) => {
        clearTimeout(timer);
        resolve(at);
      };
      this.waiters.push({ target, resolve: done });
    });
  }

  cpuMs(): number {
    return processCpuMs(this.proc.pid);
  }

  stop(): Promise<void> {
    return terminate(this.proc);
  }
}
