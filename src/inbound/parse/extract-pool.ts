// A small pool of worker threads for message extraction (src/lib/worker-pool.ts; MIME
// parsing and reply extraction are the costliest CPU work per message). With no workers
// configured, or if a worker cannot start, extraction runs on the main thread: same result,
// less throughput.
import type { Logger } from "../../lib/logger.ts";
import type { SmtpReply } from "../../smtp/reply.ts";
import { WorkerPool } from "../../lib/worker-pool.ts";
import { extractMessage, type ExtractedMessage } from "./extract.ts";
import { EXTRACT_WORKER_URL } from "../../workers.ts";
import { MessageRefused, type ParseLimits } from "./parse.ts";

interface Job {
  raw: Buffer;
  limits: ParseLimits;
  traceBytes: number;
}

type Reply = { id: number; ok: true; result: ExtractedMessage } | { id: number; ok: false; refusal: SmtpReply | null; message: string };

/** Structured clone turns Buffers into Uint8Arrays; give attachments back their Buffer type. */
function revive(result: ExtractedMessage): ExtractedMessage {
  for (const a of result.content.attachments) {
    const u8 = a.content as unknown as Uint8Array;
    a.content = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  }
  return result;
}

export class ExtractPool {
  private readonly pool: WorkerPool<Job, Reply, ExtractedMessage>;

  constructor(size: number, logger: Logger) {
    this.pool = new WorkerPool({
      url: EXTRACT_WORKER_URL,
      size,
      logger,
      work: { name: "extraction", doing: "extracting" },
      onMainThread: (job) => extractMessage(job.raw, job.limits, job.traceBytes),
      resultOf: (reply) => {
        if (reply.ok) return revive(reply.result);
        throw reply.refusal ? new MessageRefused(reply.refusal) : new Error(reply.message);
      },
    });
    this.pool.start();
  }

  /** Worker threads running now (0: extraction on the main thread). */
  get workerCount(): number {
    return this.pool.running;
  }

  extract(raw: Buffer, limits: ParseLimits, traceBytes = 0): Promise<ExtractedMessage> {
    return this.pool.run({ raw, limits, traceBytes });
  }

  async close(): Promise<void> {
    this.pool.close();
  }
}
