// bench:webhooks' receiver: a Bun.serve in the benchmark process that checks every POST
// as a careful customer would (Standard Webhooks signature, Bearer token, each event
// new and each message's events in order) and counts what it accepted. With `down` set
// it answers 503 to every POST it has verified (--receiver-down), so Postroom keeps the
// events pending and retries.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

export const KINDS = ["registration", "dispatch", "delivery"] as const;
export const EVENTS_PER_MESSAGE = KINDS.length;

export interface Post {
  atMs: number;
  events: number;
}

/** A POST answered 503 while the receiver was down. */
export interface RefusedPost extends Post {
  batchId: string;
}

/**
 * The webhook receiver: verifies each POST (Standard Webhooks signature, Bearer token),
 * checks each event (new id, kinds of its message in order) and counts what it accepted.
 * A problem is recorded in `problems` (the run aborts on it) and answered 400, so a bad
 * batch is never silently taken.
 */
export class Receiver {
  readonly secret = `whsec_${randomBytes(32).toString("base64")}`;
  readonly token = `pr_bench_hook_${randomBytes(8).toString("hex")}`;
  private readonly webhook = new Webhook(this.secret);
  /** Event ids seen (all runs). */
  private readonly seen = new Set<string>();
  /** webhook-id of each POST seen (a repeated one is a batch posted again). */
  private readonly batchIds = new Set<string>();
  /** message id → how many of its events arrived (index into KINDS of the next one). */
  readonly stage = new Map<string, number>();
  /** Events accepted, all runs. */
  events = 0;
  readonly posts: Post[] = [];
  readonly problems: string[] = [];
  repostedBatches = 0;
  /** While set, every verified POST is answered 503 and none of its events is taken (--receiver-down). */
  down = false;
  /** POSTs answered 503 while `down`, in order. */
  readonly refused: RefusedPost[] = [];
  private waiter: { target: number; resolve: (atMs: number) => void } | null = null;
  /** While set, answers wait for it (--hold). */
  gate: Promise<void> | null = null;
  private server: ReturnType<typeof Bun.serve>;

  constructor(private readonly delayMs: number) {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        const res = await this.handle(req);
        if (this.gate) await this.gate;
        if (this.delayMs > 0) await Bun.sleep(this.delayMs);
        return res;
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}/hook`;
  }

  private problem(text: string): Response {
    if (this.problems.length < 20) this.problems.push(text);
    return new Response("refused by the benchmark", { status: 400 });
  }

  private async handle(req: Request): Promise<Response> {
    const raw = await req.text();
    const at = performance.now();
    if (req.method !== "POST" || new URL(req.url).pathname !== "/hook") return this.problem(`unexpected request ${req.method} ${req.url}`);
    if (req.headers.get("authorization") !== `Bearer ${this.token}`)
      return this.problem(`wrong Authorization header: ${req.headers.get("authorization")}`);
    const headers = Object.fromEntries(req.headers);
    let body: { events?: { id: string; kind: string; message_id: string; recipient: string }[] };
    try {
      body = this.webhook.verify(raw, headers) as typeof body;
    } catch (err) {
      return this.problem(`signature check failed (${(err as Error).message}) for webhook-id ${headers["webhook-id"]}`);
    }
    const batchId = headers["webhook-id"] ?? "";
    const events = body.events;
    if (!Array.isArray(events) || events.length === 0) return this.problem(`a POST without events: ${raw.slice(0, 200)}`);
    // Down: the same batch comes back on every retry, so it is neither a repost nor seen.
    if (this.down) {
      this.refused.push({ atMs: at, events: events.length, batchId });
      return new Response("receiver down (benchmark)", { status: 503 });
    }
    if (this.batchIds.has(batchId)) this.repostedBatches++;
    this.batchIds.add(batchId);
    // Check the whole batch before taking any of it.
    const stage = new Map<string, number>();
    const ids = new Set<string>();
    for (const e of events) {
      if (this.seen.has(e.id) || ids.has(e.id))
        return this.problem(`event ${e.id} (${e.kind} of message ${e.message_id}) arrived twice (webhook-id ${batchId})`);
      ids.add(e.id);
      const s = stage.get(e.message_id) ?? this.stage.get(e.message_id) ?? 0;
      if (e.kind !== KINDS[s])
        return this.problem(
          `message ${e.message_id}: got "${e.kind}" where "${KINDS[s] ?? "nothing more"}" was due (${s} of its events seen before)`,
        );
      stage.set(e.message_id, s + 1);
    }
    for (const id of ids) this.seen.add(id);
    for (const [m, s] of stage) this.stage.set(m, s);
    this.events += events.length;
    this.posts.push({ atMs: at, events: events.length });
    if (this.waiter && this.events >= this.waiter.target) {
      this.waiter.resolve(at);
      this.waiter = null;
    }
    return new Response("ok");
  }

  /** performance.now() of the POST that brought the total to `target` events. */
  reach(target: number, timeoutMs: number): Promise<number> {
    if (this.events >= target) return Promise.resolve(this.posts.at(-1)?.atMs ?? performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`the receiver got ${this.events} events, not ${target}, within ${(timeoutMs / 1000).toFixed(0)} s`));
      }, timeoutMs);
      this.waiter = {
        target,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
    });
  }

  async stop(): Promise<void> {
    await this.server.stop(true);
  }
}
