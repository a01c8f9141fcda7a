// A small pool of worker threads for DKIM signing. The RSA signature is the costliest CPU
// work of a delivery (about 0.6 ms for a 2048-bit key on the reference machine, plus the
// key parsing and canonicalization mailauth does each time), and on the main thread it
// holds up the API and every other delivery. With no worker, or if one cannot start,
// signing runs on the main thread: the same signatures, less throughput.
import { availableParallelism } from "node:os";
import type { Logger } from "../lib/logger.ts";
import { SIGN_WORKER_URL } from "../workers.ts";
import { dkimSignatures, type SignRequest } from "./dkim.ts";

/**
 * The worker's code, next to this file. A compiled binary embeds workers only when the
 * build names them (package.json) and finds them through src/workers.ts; until this one is
 * listed there, starting it fails in the binary and signing stays on the main thread.
 */

/** Every core but the main thread's, at most four; none on a single core (a worker would only add copying). */
export function signWorkerCount(cores: number = availableParallelism()): number {
  return Math.max(0, Math.min(4, cores - 1));
}

/** Restarts allowed within RESTART_WINDOW_MS before the pool gives up on workers. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;

interface Pending {
  request: SignRequest;
  resolve: (signatures: string) => void;
  reject: (err: unknown) => void;
}

type Reply = { id: number; ok: true; signatures: string } | { id: number; ok: false; message: string };

class SignWorker {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();

  constructor(url: string, onCrash: (w: SignWorker, err: unknown) => void) {
    this.worker = new Worker(url);
    // Referenced only while it has work: an idle worker does not keep the process alive.
    // (Not unref'd while busy: with an unref'd worker, Bun's main thread polls instead of
    // sleeping while it waits for the replies, and burns a core doing so.)
    this.worker.unref();
    this.worker.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if (reply.ok) p.resolve(reply.signatures);
      else p.reject(new Error(reply.message));
    };
    this.worker.onerror = (event) => onCrash(this, event);
  }

  post(id: number, p: Pending): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(id, p);
    this.worker.postMessage({ id, request: p.request });
  }
}

export class SignPool {
  private workers: SignWorker[] = [];
  private started = false;
  private nextId = 1;
  private restarts: number[] = [];

  constructor(
    private readonly size: number,
    private readonly logger: Logger,
    private readonly url: string = SIGN_WORKER_URL,
  ) {}

  /** Starts the workers if they are not yet: loading one takes a while, better done before the first signature. */
  warm(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.size; i++) this.spawn();
  }

  /** Signatures for the request, from the least busy worker. */
  sign(request: SignRequest): Promise<string> {
    this.warm();
    if (this.workers.length === 0) return dkimSignatures(request);
    const w = this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => w.post(id, { request, resolve, reject }));
  }

  /** Worker threads running now (tests). */
  get running(): number {
    return this.workers.length;
  }

  close(): void {
    for (const w of this.workers) w.worker.terminate();
    this.workers = [];
  }

  private spawn(): void {
    try {
      this.workers.push(new SignWorker(this.url, (w, err) => this.crashed(w, err)));
    } catch (err) {
      this.logger.warn("signing worker did not start; signing on the main thread", { err });
    }
  }

  private crashed(w: SignWorker, err: unknown): void {
    this.workers = this.workers.filter((x) => x !== w);
    w.worker.terminate();
    // The messages it held are signed here instead: a worker failure loses no signature.
    for (const p of w.pending.values()) dkimSignatures(p.request).then(p.resolve, p.reject);
    const now = Date.now();
    this.restarts = [...this.restarts.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const giveUp = this.restarts.length > MAX_RESTARTS;
    this.logger.error(giveUp ? "signing worker failed again; signing on the main thread from now on" : "signing worker failed; starting another", {
      err: String((err as ErrorEvent)?.message ?? err),
    });
    if (!giveUp) this.spawn();
  }
}
