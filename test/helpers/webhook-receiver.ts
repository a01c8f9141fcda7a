// A real webhook receiver (Bun.serve) that verifies every POST with the
// standardwebhooks library and records what it accepted; its answers are scripted.
import { Webhook } from "standardwebhooks";

export interface ReceivedPost {
  headers: Record<string, string>;
  body: { events: any[] };
  /** The body as it came, for checking its signature with another secret. */
  raw: string;
  verified: boolean;
  status: number;
}

export class WebhookReceiver {
  readonly posts: ReceivedPost[] = [];
  /** Answers to give, in order; then 200. */
  readonly script: number[] = [];
  /** Bodies of the answers, in order; then "ok" for a 200 and "try later" for the rest. */
  readonly bodies: string[] = [];
  private readonly holds: { match(headers: Record<string, string>): boolean; arrive(): void; gate: Promise<void> }[] = [];

  private constructor(
    private server: ReturnType<typeof Bun.serve>,
    /** What POSTs are verified with; set it when the secret is known only later (an endpoint's, from its 201). */
    public secret: string,
  ) {}

  static start(secret: string): WebhookReceiver {
    let self: WebhookReceiver;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const raw = await req.text();
        const headers = Object.fromEntries(req.headers);
        const hold = self.holds.find((h) => h.match(headers));
        if (hold) {
          self.holds.splice(self.holds.indexOf(hold), 1);
          hold.arrive();
          await hold.gate;
        }
        let verified = true;
        try {
          new Webhook(self.secret).verify(raw, headers);
        } catch {
          verified = false;
        }
        const status = self.script.shift() ?? 200;
        self.posts.push({ headers, body: JSON.parse(raw), raw, verified, status });
        return new Response(self.bodies.shift() ?? (status === 200 ? "ok" : "try later"), { status });
      },
    });
    self = new WebhookReceiver(server, secret);
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}/hook`;
  }

  /**
   * The next POST (whose headers `match`) waits for its answer until `release()`; `arrived`
   * resolves when it came. Holds are taken in the order they were asked for. A held POST's
   * answer is taken from the script when released, and it is recorded in `posts` then.
   */
  holdNext(match: (headers: Record<string, string>) => boolean = () => true): { arrived: Promise<void>; release(): void } {
    const arrived = Promise.withResolvers<void>();
    const gate = Promise.withResolvers<void>();
    this.holds.push({ match, arrive: () => arrived.resolve(), gate: gate.promise });
    return { arrived: arrived.promise, release: () => gate.resolve() };
  }

  /** Events of the POSTs that were acknowledged (2xx), in the order they arrived. */
  acknowledged(): any[] {
    return this.posts.filter((p) => p.status >= 200 && p.status < 300).flatMap((p) => p.body.events);
  }

  async stop(): Promise<void> {
    await this.server.stop(true);
  }
}
