// A line-level SMTP client for tests that need exact control of one connection:
// several transactions on it, commands a library would not send, replies read one by one.
import { connect, type Socket } from "node:net";
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from "node:tls";

export class SmtpSession {
  private buffer = "";
  private waiting: ((line: string) => void)[] = [];
  private lines: string[] = [];
  closed = false;

  private constructor(private socket: Socket) {
    this.listen(socket);
  }

  private listen(socket: Socket): void {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf("\r\n")) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 2);
        const w = this.waiting.shift();
        if (w) w(line);
        else this.lines.push(line);
      }
    });
    socket.on("close", () => {
      this.closed = true;
      for (const w of this.waiting.splice(0)) w("(connection closed)");
    });
  }

  /** `localAddress`: the client's own address (127.0.0.2 is another client on Linux loopback). */
  static async open(port: number, opts: { localAddress?: string } = {}): Promise<{ session: SmtpSession; greeting: string }> {
    const socket = connect({ port, host: "127.0.0.1", localAddress: opts.localAddress });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const session = new SmtpSession(socket);
    return { session, greeting: await session.reply() };
  }

  private line(): Promise<string> {
    const ready = this.lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.closed) return Promise.resolve("(connection closed)");
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** One whole reply (all lines of a multi-line reply, joined by "\n"). */
  async reply(): Promise<string> {
    const lines: string[] = [];
    for (;;) {
      const l = await this.line();
      lines.push(l);
      if (!/^\d{3}-/.test(l)) return lines.join("\n");
    }
  }

  /**
   * STARTTLS, then the handshake on this socket (any certificate accepted: the test reads
   * it); returns the server's certificate.
   */
  async startTls(servername: string): Promise<PeerCertificate> {
    const go = await this.command("STARTTLS");
    if (!go.startsWith("220")) throw new Error(`STARTTLS refused: ${go}`);
    const plain = this.socket;
    plain.removeAllListeners("data");
    plain.removeAllListeners("close");
    const secure: TLSSocket = tlsConnect({ socket: plain, servername, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once("secureConnect", resolve);
      secure.once("error", reject);
    });
    this.socket = secure;
    this.listen(secure);
    return secure.getPeerCertificate();
  }

  async command(cmd: string): Promise<string> {
    this.socket.write(cmd + "\r\n");
    return this.reply();
  }

  /** DATA with dot-stuffing; returns the reply to the final dot. */
  async data(message: string | Buffer): Promise<string> {
    const go = await this.command("DATA");
    if (!go.startsWith("354")) return go;
    const text = (typeof message === "string" ? message : message.toString("latin1")).replace(/\r?\n/g, "\r\n");
    const stuffed = text.replace(/^\./gm, "..");
    this.socket.write(Buffer.from(stuffed + (stuffed.endsWith("\r\n") ? "" : "\r\n") + ".\r\n", "latin1"));
    return this.reply();
  }

  /** Writes raw bytes (a line in pieces, a message a few bytes at a time) without reading a reply. */
  write(bytes: string): void {
    this.socket.write(bytes);
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.socket.write("QUIT\r\n");
      this.socket.end();
    }
  }
}
