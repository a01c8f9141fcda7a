// The API's HTTP(S) listener. Bun.serve cannot change its certificate in place, so a new
// certificate starts a second server on the same port (SO_REUSEPORT) and the old one
// stops accepting while its requests in flight finish: no restart, nothing dropped.
import type { ListenAddress } from "../config/units.ts";
import type { Logger } from "../lib/logger.ts";
import type { TlsMaterial } from "../tls/certificate.ts";
import { errorResponse } from "./errors.ts";

type Server = ReturnType<typeof Bun.serve>;

export interface HttpListenerOptions {
  at: ListenAddress;
  /** `peerIp`: the connecting address (a proxy's, behind one: serve.ts derives the client's). */
  handle(req: Request, peerIp: string | undefined): Response | Promise<Response>;
  logger: Logger;
}

export class HttpListener {
  private server: Server | null = null;
  private boundPort: number | null = null;

  constructor(private readonly opts: HttpListenerOptions) {}

  get port(): number | null {
    return this.boundPort;
  }

  get listening(): boolean {
    return this.server !== null;
  }

  /** Listens on HTTP (`tls` null) or HTTPS; returns the bound port. */
  start(tls: TlsMaterial | null): number {
    this.server = this.serve(this.opts.at.port, tls);
    this.boundPort = this.server.port ?? null;
    this.opts.logger.info("http listening", { address: this.opts.at.host, port: this.boundPort, https: tls !== null });
    return this.boundPort!;
  }

  /** Serves new connections with `tls` from now on (HTTPS listeners only). */
  useCertificate(tls: TlsMaterial): void {
    const old = this.server;
    if (!old || this.boundPort === null) return;
    this.server = this.serve(this.boundPort, tls);
    void old.stop(false);
  }

  async stop(): Promise<void> {
    await this.server?.stop(true);
    this.server = null;
  }

  private serve(port: number, tls: TlsMaterial | null): Server {
    const { handle, logger } = this.opts;
    return Bun.serve({
      hostname: this.opts.at.host,
      port,
      // Lets the next certificate's server bind the port while this one drains.
      reusePort: tls !== null,
      // Bodies are capped by the router's middleware, which reads them as a stream and answers 413
      // as {status, error}. Bun's own cap would answer a declared length over it first,
      // with an empty body; it buffers nothing we do not read, so it has no other use.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Never Bun's development error page (source lines, working directory), whatever NODE_ENV says.
      development: false,
      ...(tls ? { tls: { key: tls.key, cert: tls.cert } } : {}),
      fetch: async (req, srv) => {
        // HTTP/1.0 without Host (or a request line Bun keeps as it came) gives no absolute URL.
        if (!URL.canParse(req.url)) return errorResponse(400, "the request needs a Host header and a path starting with /");
        try {
          return await handle(req, srv.requestIP(req)?.address);
        } catch (err) {
          logger.error("unhandled error in http listener", { err, method: req.method });
          return errorResponse(500);
        }
      },
      error: (err) => {
        logger.error("unhandled error in http listener", { err });
        return errorResponse(500);
      },
    });
  }
}
