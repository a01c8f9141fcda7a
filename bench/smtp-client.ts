// A minimal SMTP client over node:net for the inbound benchmark: one persistent
// connection, EHLO once, then MAIL FROM + RCPT TO + DATA pipelined (RFC 2920, as Postfix
// does) and the message, one transaction at a time. It does nothing per message but
// write prepared bytes and read replies, so it stays far lighter than the servers it
// measures (nodemailer's pool builds and streams every message through its MIME
// machinery, which would eat a good part of the shared 2 cores).
import { connect, type Socket } from "node:net";

export interface SmtpReplyLine {
  code: number;
  text: string;
}

export class SmtpError extends Error {
  override name = "SmtpError";
}

export class SmtpConnection {
  private buf = "";
  private lines: string[] = [];
  private waiters: { resolve: (r: SmtpReplyLine) => void; reject: (e: Error) => void }[] = [];
  private ready: SmtpReplyLine[] = [];
  private failure: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new SmtpError("connection closed by the server")));
  }

  static async open(host: string, port: number, ehloName: string): Promise<SmtpConnection> {
    const socket = connect({ host, port });
    const conn = new SmtpConnection(socket);
    const greeting = await conn.reply();
    if (greeting.code !== 220) throw new SmtpError(`greeting: ${greeting.code} ${greeting.text}`);
    socket.write(`EHLO ${ehloName}\r\n`);
    const ehlo = await conn.reply();
    if (ehlo.code !== 250) throw new SmtpError(`EHLO: ${ehlo.code} ${ehlo.text}`);
    if (!/\bPIPELINING\b/i.test(ehlo.text)) throw new SmtpError("the server does not offer PIPELINING");
    return conn;
  }

  private fail(err: Error) {
    if (this.failure) return;
    this.failure = err;
    for (const w of this.waiters.splice(0)) w.reject(err);
  }

  private onData(chunk: string) {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf("\r\n")) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 2);
      this.lines.push(line.slice(4));
      // "250-..." continues a multi-line reply; "250 ..." ends it.
      if (line.charAt(3) === "-") continue;
      const r = { code: Number(line.slice(0, 3)), text: this.lines.join("\n") };
      this.lines = [];
      const w = this.waiters.shift();
      if (w) w.resolve(r);
      else this.ready.push(r);
    }
  }

  private reply(): Promise<SmtpReplyLine> {
    const r = this.ready.shift();
    if (r) return Promise.resolve(r);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * One transaction. `data` is the message as it goes on the wire: CRLF lines, dot-stuffed,
   * ending with CRLF "." CRLF. Resolves with the final reply (whatever its code).
   */
  async send(mailFrom: string, rcptTo: string, data: Uint8Array): Promise<SmtpReplyLine> {
    this.socket.write(`MAIL FROM:<${mailFrom}>\r\nRCPT TO:<${rcptTo}>\r\nDATA\r\n`);
    const mail = await this.reply();
    const rcpt = await this.reply();
    const go = await this.reply();
    if (go.code !== 354) {
      // Nothing to send; reset so the connection stays usable, and report the first refusal.
      this.socket.write("RSET\r\n");
      await this.reply();
      return mail.code !== 250 ? mail : rcpt.code !== 250 ? rcpt : go;
    }
    this.socket.write(data);
    return this.reply();
  }

  async quit(): Promise<void> {
    if (this.failure) return;
    this.socket.write("QUIT\r\n");
    await this.reply().catch(() => undefined);
    this.socket.end();
  }
}
