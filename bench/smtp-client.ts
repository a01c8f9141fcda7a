// A minimal SMTP client over node:net for the benchmarks: one persistent connection, EHLO
// once (optionally STARTTLS, EHLO again and AUTH PLAIN once, as a submission client does:
// bench:outbound's SMTP feed), then MAIL FROM + RCPT TO + DATA pipelined (RFC 2920, as
// Postfix does) and the message, one transaction at a time. It does nothing per message but
// write prepared bytes and read replies, so it stays far lighter than the servers it
// measures (nodemailer's pool builds and streams every message through its MIME
// machinery, which would eat a good part of the shared 2 cores).
import { connect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";

export interface SmtpReplyLine {
  code: number;
  text: string;
}

export class SmtpError extends Error {
  override name = "SmtpError";
}

/** What a session does once after EHLO, before its transactions (none by default: bench:inbound's port 25). */
export interface SessionSetup {
  /** STARTTLS, then EHLO again; the server's certificate is not checked (a self-signed one on loopback). */
  startTls?: boolean;
  /** AUTH PLAIN with these credentials (after STARTTLS, if asked): the server must answer 235. */
  auth?: { user: string; password: string };
}

export class SmtpConnection {
  private buf = "";
  private lines: string[] = [];
  private waiters: { resolve: (r: SmtpReplyLine) => void; reject: (e: Error) => void }[] = [];
  private ready: SmtpReplyLine[] = [];
  private failure: Error | null = null;

  private socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.listen(socket);
  }

  private listen(socket: Socket) {
    socket.setNoDelay(true);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new SmtpError("connection closed by the server")));
  }

  static async open(host: string, port: number, ehloName: string, setup: SessionSetup = {}): Promise<SmtpConnection> {
    const conn = new SmtpConnection(connect({ host, port }));
    try {
      await conn.setUp(ehloName, setup);
    } catch (err) {
      // A session that could not be set up is closed, not left open (a server waits on it).
      conn.socket.destroy();
      throw err;
    }
    return conn;
  }

  private async setUp(ehloName: string, setup: SessionSetup): Promise<void> {
    const greeting = await this.reply();
    if (greeting.code !== 220) throw new SmtpError(`greeting: ${greeting.code} ${greeting.text}`);
    let ehlo = await this.ehlo(ehloName);
    if (setup.startTls) {
      if (!/^STARTTLS$/im.test(ehlo.text)) throw new SmtpError("the server does not offer STARTTLS");
      await this.startTls();
      ehlo = await this.ehlo(ehloName);
    }
    if (setup.auth) {
      if (!/^AUTH\b.*\bPLAIN\b/im.test(ehlo.text)) throw new SmtpError(`the server does not offer AUTH PLAIN: ${ehlo.text}`);
      const token = Buffer.from(`\0${setup.auth.user}\0${setup.auth.password}`).toString("base64");
      this.socket.write(`AUTH PLAIN ${token}\r\n`);
      const auth = await this.reply();
      if (auth.code !== 235) throw new SmtpError(`AUTH PLAIN: ${auth.code} ${auth.text}`);
    }
    if (!/\bPIPELINING\b/i.test(ehlo.text)) throw new SmtpError("the server does not offer PIPELINING");
  }

  private async ehlo(ehloName: string): Promise<SmtpReplyLine> {
    this.socket.write(`EHLO ${ehloName}\r\n`);
    const ehlo = await this.reply();
    if (ehlo.code !== 250) throw new SmtpError(`EHLO: ${ehlo.code} ${ehlo.text}`);
    return ehlo;
  }

  /** STARTTLS: once the server says 220, the same socket carries TLS (the plain one's listeners are dropped). */
  private async startTls(): Promise<void> {
    this.socket.write("STARTTLS\r\n");
    const go = await this.reply();
    if (go.code !== 220) throw new SmtpError(`STARTTLS: ${go.code} ${go.text}`);
    const plain = this.socket;
    plain.removeAllListeners("data");
    plain.removeAllListeners("close");
    plain.removeAllListeners("error");
    plain.on("error", (err) => this.fail(err));
    const secure = tlsConnect({ socket: plain, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once("secureConnect", () => resolve());
      secure.once("error", reject);
    });
    this.socket = secure;
    this.listen(secure);
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
