// A small pool of worker threads for what a received message costs in CPU (src/lib/
// worker-pool.ts): MIME parsing and reply extraction, and, when the resolver can be made
// again on a worker (createResolver's), the SPF, DKIM and DMARC checks with their DNS
// lookups (examine.ts). With no workers configured, or if a worker cannot start, the work
// runs on the main thread: same result, less throughput.
import type { ResolverOptions } from "../../lib/dns.ts";
import type { Logger } from "../../lib/logger.ts";
import type { SmtpReply } from "../../smtp/reply.ts";
import { WorkerPool } from "../../lib/worker-pool.ts";
import { EXTRACT_WORKER_URL } from "../../workers.ts";
import type { AuthChecker, AuthChecks, AuthSession, FirstChecks } from "./auth-checks.ts";
import { type Examined, examineMessage } from "./examine.ts";
import { extractMessage, type ExtractedMessage } from "./extract.ts";
import { MessageRefused, type ParseLimits } from "./parse.ts";

/**
 * A job for a worker (extract-worker.ts): a message to extract; or to examine (examine.ts);
 * or only SPF and DKIM of a message as sent (its `raw` without our trace lines).
 */
export type ExtractJob =
  | { kind: "extract"; raw: Buffer; limits: ParseLimits; traceBytes: number }
  | { kind: "examine"; raw: Buffer; limits: ParseLimits; traceBytes: number; session: AuthSession; resolver: ResolverOptions }
  | { kind: "checks"; raw: Buffer; session: AuthSession; hasDkimSignature: boolean; resolver: ResolverOptions };

export type ExtractResult = { extracted: ExtractedMessage | null; auth: AuthChecks | null; first: FirstChecks | null };

export type ExtractReply =
  | ({ id: number; ok: true } & ExtractResult)
  | { id: number; ok: false; refusal: SmtpReply | null; message: string };

const NO_BYTES = Buffer.alloc(0);

/** Structured clone turns Buffers into Uint8Arrays; give attachments back their Buffer type. */
function revive(result: ExtractedMessage | null): ExtractedMessage | null {
  for (const a of result?.content.attachments ?? []) {
    const u8 = a.content as unknown as Uint8Array;
    a.content = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  }
  return result;
}

export class ExtractPool {
  private readonly pool: WorkerPool<ExtractJob, ExtractReply, ExtractResult>;

  /**
   * `auth` checks senders on the main thread (no worker, or a worker's jobs after it
   * failed); its resolver's `options`, when it has them, make the workers' own.
   */
  constructor(
    private readonly size: number,
    logger: Logger,
    private readonly auth: AuthChecker,
  ) {
    this.pool = new WorkerPool({
      url: EXTRACT_WORKER_URL,
      size,
      logger,
      work: { name: "extraction", doing: "extracting" },
      onMainThread: (job) => doJob(job, () => this.auth),
      // A view's whole buffer would be cloned (a received message sits behind room for our
      // trace lines, a large one in a buffer grown to fit): its own bytes only, handed over.
      encode: (job) => {
        const raw = new Uint8Array(job.raw);
        return { message: { ...job, raw }, transfer: [raw.buffer] };
      },
      resultOf: (reply) => {
        if (reply.ok) return { extracted: revive(reply.extracted), auth: reply.auth, first: reply.first };
        throw reply.refusal ? new MessageRefused(reply.refusal) : new Error(reply.message);
      },
    });
    // Started by the first message (WorkerPool.run): an appliance, or a test, that receives
    // no mail loads no worker; the first message waits for the load (about 0.2 s).
  }

  /** Worker threads running now (0: extraction on the main thread). */
  get workerCount(): number {
    return this.pool.running;
  }

  async extract(raw: Buffer, limits: ParseLimits, traceBytes = 0): Promise<ExtractedMessage> {
    return (await this.pool.run({ kind: "extract", raw, limits, traceBytes })).extracted!;
  }

  /**
   * The message parsed and its sender checked (examine.ts). Where the work goes:
   * - two workers or more: all of it to a worker;
   * - one worker: SPF and DKIM (mailauth's canonicalization, the RSA verification, two of
   *   the three lookups) to it, the parse and DMARC here. A message's parse and its checks
   *   then cost each thread about the same (bench:inbound, issue 38), where the whole of
   *   it on the one worker left that worker the limit and the main thread three quarters idle;
   * - no worker, or a resolver a worker cannot make (a test's fake): all of it here.
   */
  async examine(raw: Buffer, limits: ParseLimits, traceBytes: number, session: AuthSession): Promise<Examined> {
    const resolver = this.auth.resolverOptions;
    if (resolver && this.size >= 2) {
      const { extracted, auth } = await this.pool.run({ kind: "examine", raw, limits, traceBytes, session, resolver });
      return { extracted: extracted!, auth: auth! };
    }
    const firstChecks =
      resolver && this.size === 1
        ? async (sent: Buffer, hasDkimSignature: boolean) => {
            // SPF needs only the session: the bytes go over for DKIM alone.
            const raw = hasDkimSignature ? sent : NO_BYTES;
            return (await this.pool.run({ kind: "checks", raw, session, hasDkimSignature, resolver })).first!;
          }
        : undefined;
    return examineMessage({ raw, limits, traceBytes, session }, { auth: this.auth, extract: extractMessage, firstChecks });
  }

  async close(): Promise<void> {
    this.pool.close();
  }
}

/**
 * A job done on this thread: the worker's work (extract-worker.ts), or a worker's job after
 * it failed. `auth`: the checker of the job's resolver (asked only by jobs that check).
 */
export async function doJob(job: ExtractJob, auth: () => AuthChecker): Promise<ExtractResult> {
  switch (job.kind) {
    case "extract":
      return { extracted: await extractMessage(job.raw, job.limits, job.traceBytes), auth: null, first: null };
    case "examine": {
      const { extracted, auth: verdicts } = await examineMessage(job, { auth: auth(), extract: extractMessage });
      return { extracted, auth: verdicts, first: null };
    }
    case "checks":
      return { extracted: null, auth: null, first: await auth().firstChecks(job.raw, job.session, job.hasDkimSignature) };
  }
}
