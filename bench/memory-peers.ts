// The peers and probes of bench:memory (bench/memory.ts): an HTTP target that reads every
// body and throws it away, an SMTP sink that does the same with delivered mail, an SMTP
// client that sends one large message with SIZE= declared, the large messages themselves,
// and a sampler of a process's resident memory from /proc.
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { SMTPServer } from "smtp-server";

/** Bun.serve on loopback: reads each POST to the end, keeps nothing, answers 200. */
export function discardingTarget() {
  const counts = { posts: 0, bytes: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    maxRequestBodySize: 1024 ** 3,
    idleTimeout: 0,
    async fetch(req) {
      if (req.body) for await (const chunk of req.body) counts.bytes += chunk.byteLength;
      if (req.method === "POST") counts.posts++;
      return new Response("ok");
    },
  });
  return { counts, url: `http://127.0.0.1:${server.port}/memory`, stop: () => server.stop(true) };
}

/** smtp-server on loopback taking every message (any size), reading it and throwing it away. */
export async function discardingSink() {
  const counts = { messages: 0, bytes: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
    size: 0,
    onData(stream, _session, callback) {
      stream.on("data", (c: Buffer) => (counts.bytes += c.length));
      stream.on("end", () => {
        counts.messages++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return { counts, port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * A message of close to `sizeBytes` on the wire: a short text part and one attachment of
 * random bytes in Base64 lines of 76 characters. The body is shared by every send; each
 * send has its own header (Message-ID). Nothing needs dot-stuffing.
 */
export function largeMessage(sizeBytes: number, from: string, to: string) {
  const boundary = "bench-memory-boundary-7f3a";
  const text = "Hello,\r\n\r\nthe report is attached.\r\n";
  // 57 bytes → 76 Base64 characters + CRLF; a little room for the headers and MIME lines.
  const attachmentBytes = Math.floor(((sizeBytes - 2048) * 57) / 78 / 57) * 57;
  const base64 = Buffer.from(crypto.getRandomValues(new Uint8Array(attachmentBytes)).buffer).toString("base64");
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 76) lines.push(base64.slice(i, i + 76));
  const body = Buffer.from(
    [
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      "",
      `--${boundary}`,
      "Content-Type: text/plain; charset=utf-8",
      "",
      text,
      `--${boundary}`,
      'Content-Type: application/pdf; name="report.pdf"',
      'Content-Disposition: attachment; filename="report.pdf"',
      "Content-Transfer-Encoding: base64",
      "",
      lines.join("\r\n"),
      `--${boundary}--`,
      "",
    ].join("\r\n"),
    "latin1",
  );
  const head = (i: number) =>
    Buffer.from(
      `From: <${from}>\r\nTo: <${to}>\r\nSubject: large message ${i}\r\nMessage-ID: <memory-${i}-${Date.now()}@bench.test>\r\nMIME-Version: 1.0\r\n`,
      "latin1",
    );
  const size = head(0).length + body.length;
  return { head, body, size, attachmentBytes };
}

export interface SmtpOutcome {
  /** The reply that ended the transaction (MAIL, RCPT or DATA refused, or the reply to the message). */
  code: number;
  text: string;
  /** The server said 354 and took the message's bytes. */
  sentData: boolean;
}

/** How a client sends: SIZE= declared (the default) or not, from which loopback address. */
export interface SendOptions {
  declareSize?: boolean;
  localAddress?: string;
}

/**
 * One connection, one transaction: EHLO, MAIL FROM with SIZE= (unless `opts` says not),
 * RCPT TO, DATA, the message. `onData(true)` when 354 came (the message is in flight),
 * `onData(false)` when the final reply came after it.
 */
export async function sendOne(
  port: number,
  from: string,
  to: string,
  head: Buffer,
  body: Buffer,
  onData: (inFlight: boolean) => void,
  auth?: { user: string; pass: string },
  opts: SendOptions = {},
): Promise<SmtpOutcome> {
  const socket: Socket = connect({ host: "127.0.0.1", port, localAddress: opts.localAddress });
  const replies: { code: number; text: string }[] = [];
  const waiters: ((r: { code: number; text: string }) => void)[] = [];
  let failure: Error | null = null;
  let buf = "";
  const failAll = (err: Error) => {
    failure ??= err;
    for (const w of waiters.splice(0)) w({ code: 0, text: err.message });
  };
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    buf += chunk;
    let nl: number;
    let lines: string[] = [];
    while ((nl = buf.indexOf("\r\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      lines.push(line.slice(4));
      if (line.charAt(3) === "-") continue;
      const r = { code: Number(line.slice(0, 3)), text: lines.join(" ") };
      lines = [];
      const w = waiters.shift();
      if (w) w(r);
      else replies.push(r);
    }
  });
  socket.on("error", (err) => failAll(err));
  socket.on("close", () => failAll(new Error("connection closed by the server")));
  const reply = () =>
    replies.length
      ? Promise.resolve(replies.shift()!)
      : failure
        ? Promise.resolve({ code: 0, text: failure.message })
        : new Promise<{ code: number; text: string }>((r) => waiters.push(r));
  const command = (line: string) => {
    socket.write(`${line}\r\n`);
    return reply();
  };
  try {
    const greeting = await reply();
    if (greeting.code !== 220) return { ...greeting, sentData: false };
    const ehlo = await command("EHLO client.bench.test");
    if (ehlo.code !== 250) return { ...ehlo, sentData: false };
    if (auth) {
      const authed = await command(`AUTH PLAIN ${Buffer.from(`\u0000${auth.user}\u0000${auth.pass}`).toString("base64")}`);
      if (authed.code !== 235) return { ...authed, sentData: false };
    }
    const size = head.length + body.length;
    const mail = await command(`MAIL FROM:<${from}>${opts.declareSize === false ? "" : ` SIZE=${size}`}`);
    if (mail.code !== 250) return { ...mail, sentData: false };
    const rcpt = await command(`RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return { ...rcpt, sentData: false };
    const go = await command("DATA");
    if (go.code !== 354) return { ...go, sentData: false };
    onData(true);
    socket.write(head);
    socket.write(body);
    socket.write("\r\n.\r\n");
    const final = await reply();
    onData(false);
    socket.write("QUIT\r\n");
    return { ...final, sentData: true };
  } finally {
    socket.end();
  }
}

/** VmRSS and VmHWM of a process in bytes (0 when it is gone). */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** Samples the process's VmRSS every `everyMs` until stopped; the highest seen. */
export function rssSampler(pid: number, everyMs = 50) {
  let peak = memoryOf(pid).rss;
  const timer = setInterval(() => {
    const { rss } = memoryOf(pid);
    if (rss > peak) peak = rss;
  }, everyMs);
  return {
    get peak() {
      return peak;
    },
    stop() {
      clearInterval(timer);
      const { rss } = memoryOf(pid);
      if (rss > peak) peak = rss;
      return peak;
    },
  };
}

export const MB = 1024 * 1024;
export const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
