// A real HTTP target (Bun.serve on loopback) that records what it receives and answers
// as the test scripts it: status, content type, body, delay.

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  contentType: string;
  /** The raw body, for parsing with a real multipart parser. */
  raw: Uint8Array;
  /** JSON bodies parsed; null otherwise. */
  json: any;
}

export interface Answer {
  status: number;
  contentType?: string;
  body?: string;
  delayMs?: number;
  headers?: Record<string, string>;
}

export class TestTarget {
  readonly received: Received[] = [];
  /** Answers by path; the default answers 200 "ok". */
  readonly answers = new Map<string, Answer>();
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(private server: ReturnType<typeof Bun.serve>) {}

  static start(): TestTarget {
    let self: TestTarget;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 120,
      async fetch(req) {
        const url = new URL(req.url);
        const raw = new Uint8Array(await req.arrayBuffer());
        const contentType = req.headers.get("content-type") ?? "";
        let json: unknown = null;
        if (contentType.startsWith("application/json")) json = JSON.parse(new TextDecoder().decode(raw));
        self.received.push({ method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), contentType, raw, json });
        self.waiters = self.waiters.filter((w) => (self.received.length >= w.count ? (w.resolve(), false) : true));
        const answer = self.answers.get(url.pathname) ?? { status: 200, body: "ok" };
        if (answer.delayMs) await Bun.sleep(answer.delayMs);
        return new Response(answer.body ?? "", {
          status: answer.status,
          headers: { ...(answer.contentType ? { "content-type": answer.contentType } : {}), ...answer.headers },
        });
      },
    });
    self = new TestTarget(server);
    return self;
  }

  url(path = "/in", credentials = ""): string {
    return `http://${credentials ? credentials + "@" : ""}127.0.0.1:${this.server.port}${path}`;
  }

  get port(): number {
    return this.server.port!;
  }

  /** The requests posted to `path`. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Parses a multipart body with the Fetch API's own parser (not ours). */
  static async formData(r: Received): Promise<Awaited<ReturnType<Response["formData"]>>> {
    return new Response(r.raw, { headers: { "content-type": r.contentType } }).formData();
  }

  async stop(): Promise<void> {
    await this.server.stop(true);
  }
}
