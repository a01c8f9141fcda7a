// A small pool of worker threads for DKIM signing (src/lib/worker-pool.ts). The RSA
// signature is the costliest CPU work of a delivery (about 0.6 ms for a 2048-bit key on the
// reference machine, plus the key parsing and canonicalization mailauth does each time),
// and on the main thread it holds up the API and every other delivery. With no worker, or
// if one cannot start, signing runs on the main thread: the same signatures, less throughput.
import { availableParallelism } from "node:os";
import type { Logger } from "../lib/logger.ts";
import { spareCoreWorkers, WorkerPool } from "../lib/worker-pool.ts";
import { SIGN_WORKER_URL } from "../workers.ts";
import { dkimSignatures, type SignRequest } from "./dkim.ts";

/** Every core but the main thread's, at most four; none on a single core (a worker would only add copying). */
export function signWorkerCount(cores: number = availableParallelism()): number {
  return spareCoreWorkers(cores);
}

type Reply = { id: number; ok: true; signatures: string } | { id: number; ok: false; message: string };

export class SignPool {
  private readonly pool: WorkerPool<{ request: SignRequest }, Reply, string>;

  constructor(size: number, logger: Logger, url: string = SIGN_WORKER_URL) {
    this.pool = new WorkerPool({
      url,
      size,
      logger,
      work: { name: "signing", doing: "signing" },
      onMainThread: (job) => dkimSignatures(job.request),
      resultOf: (reply) => {
        if (!reply.ok) throw new Error(reply.message);
        return reply.signatures;
      },
      // An idle signer does not keep the process alive.
      unrefWhenIdle: true,
    });
  }

  /** Starts the workers if they are not yet: loading one takes a while, better done before the first signature. */
  warm(): void {
    this.pool.start();
  }

  /** Signatures for the request, from the least busy worker. */
  sign(request: SignRequest): Promise<string> {
    return this.pool.run({ request });
  }

  /** Worker threads running now (tests). */
  get running(): number {
    return this.pool.running;
  }

  close(): void {
    this.pool.close();
  }
}
