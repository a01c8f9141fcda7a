// A small pool of worker threads for CPU work that would hold up the main thread (message
// extraction, DKIM signing). Each job goes to the least busy worker. A worker that fails
// hands its jobs to the main thread and is replaced, until MAX_RESTARTS failures within
// RESTART_WINDOW_MS: then the pool gives up on workers. With no worker (none configured,
// none could start, or given up) the work runs on the main thread: the same result, less
// throughput.
import type { Logger } from "./logger.ts";

/**
 * Workers for a pool that should use the cores the main thread does not: every core but
 * its own, at most `max`; none on a single core, where a worker would only add copying.
 */
export function spareCoreWorkers(cores: number, max = 4): number {
  return Math.max(0, Math.min(max, cores - 1));
}

/** Restarts allowed within RESTART_WINDOW_MS before the pool gives up on workers. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 60_000;

export interface WorkerPoolOptions<Job extends object, Reply extends { id: number }, Result> {
  /** The worker's entry point (src/workers.ts): it answers each `{ id, ...job }` with a Reply of the same id. */
  url: string;
  size: number;
  logger: Logger;
  /** The work, as the log names it: "extraction" ("extraction worker failed"), and doing it: "extracting". */
  work: { name: string; doing: string };
  /** Does a job on the main thread: with no worker, or for the jobs of a worker that failed. */
  onMainThread(job: Job): Promise<Result>;
  /** A worker's reply as the job's result; throws to reject it. */
  resultOf(reply: Reply): Result;
  /**
   * Lets an idle worker not keep the process alive. Referenced again while it has work:
   * with an unref'd worker, Bun's main thread polls instead of sleeping while it waits for
   * the replies, and burns a core doing so.
   */
  unrefWhenIdle?: boolean;
  /**
   * What is posted for a job, and what is handed over rather than copied. Default: the job
   * itself, all copied. The job is kept as it was, for the main thread should its worker fail.
   */
  encode?(job: Job): { message: object; transfer: ArrayBuffer[] };
}

interface Pending<Job, Result> {
  job: Job;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
}

class PoolWorker<Job, Reply extends { id: number }, Result> {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending<Job, Result>>();

  constructor(
    url: string,
    private readonly unrefWhenIdle: boolean,
    private readonly encode: ((job: Job) => { message: object; transfer: ArrayBuffer[] }) | undefined,
    resultOf: (reply: Reply) => Result,
    onCrash: (w: PoolWorker<Job, Reply, Result>, err: unknown) => void,
  ) {
    this.worker = new Worker(url);
    if (unrefWhenIdle) this.worker.unref();
    this.worker.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (this.unrefWhenIdle && this.pending.size === 0) this.worker.unref();
      let result: Result;
      try {
        result = resultOf(reply);
      } catch (err) {
        p.reject(err);
        return;
      }
      p.resolve(result);
    };
    this.worker.onerror = (event) => onCrash(this, event);
  }

  post(id: number, p: Pending<Job, Result>): void {
    if (this.unrefWhenIdle && this.pending.size === 0) this.worker.ref();
    this.pending.set(id, p);
    if (!this.encode) return this.worker.postMessage({ id, ...p.job });
    const { message, transfer } = this.encode(p.job);
    this.worker.postMessage({ id, ...message }, transfer);
  }
}

export class WorkerPool<Job extends object, Reply extends { id: number }, Result> {
  private workers: PoolWorker<Job, Reply, Result>[] = [];
  private started = false;
  private nextId = 1;
  private restarts: number[] = [];

  constructor(private readonly opts: WorkerPoolOptions<Job, Reply, Result>) {}

  /** Starts the workers if they are not yet (loading one takes a while: better before the first job). */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.opts.size; i++) this.spawn();
  }

  /** The job's result, from the least busy worker, or from the main thread when there is none. */
  run(job: Job): Promise<Result> {
    this.start();
    if (this.workers.length === 0) return this.opts.onMainThread(job);
    const w = this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => w.post(id, { job, resolve, reject }));
  }

  /** Worker threads running now (0: the work runs on the main thread). */
  get running(): number {
    return this.workers.length;
  }

  close(): void {
    for (const w of this.workers) w.worker.terminate();
    this.workers = [];
  }

  private spawn(): void {
    const { url, unrefWhenIdle = false, encode, resultOf, logger, work } = this.opts;
    try {
      this.workers.push(new PoolWorker(url, unrefWhenIdle, encode, resultOf, (w, err) => this.crashed(w, err)));
    } catch (err) {
      logger.warn(`${work.name} worker did not start; ${work.doing} on the main thread`, { err });
    }
  }

  private crashed(w: PoolWorker<Job, Reply, Result>, err: unknown): void {
    this.workers = this.workers.filter((x) => x !== w);
    w.worker.terminate();
    // The jobs it held are done here instead: a worker failure loses no work.
    for (const p of w.pending.values()) this.opts.onMainThread(p.job).then(p.resolve, p.reject);
    const now = Date.now();
    this.restarts = [...this.restarts.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const giveUp = this.restarts.length > MAX_RESTARTS;
    const { name, doing } = this.opts.work;
    this.opts.logger.error(
      giveUp ? `${name} worker failed again; ${doing} on the main thread from now on` : `${name} worker failed; starting another`,
      {
        err: String((err as ErrorEvent)?.message ?? err),
      },
    );
    if (!giveUp) this.spawn();
  }
}
