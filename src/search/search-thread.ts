// Searches of E6 and E12 on SQLite run on a worker thread with a read-only connection of
// their own. bun:sqlite runs a statement synchronously on the thread that calls it: on the
// event loop, one search of 40,000 sent messages (82 terms, page=2) held every HTTP
// request and SMTP session of the process for 19 s. On the thread, the event loop only
// posts the request and takes the answer; WAL lets the thread read while the loop writes,
// and as each slice (sliced-search.ts) is a read of its own, the thread never holds a
// snapshot for long (one would keep the WAL from being checkpointed past it).
// One thread, one search at a time: searches take at most one core, and a search waiting
// its turn is still bounded by its deadline (the thread answers "timed out" at once).
import type { Database } from "bun:sqlite";
import type { Logger } from "../lib/logger.ts";
import { SearchTimeoutError } from "../store/sliced-search.ts";
import { SEARCH_WORKER_URL } from "../workers.ts";
import { type ReaderOf, runSearch, type SearchAnswer, type SearchRequest } from "./run-search.ts";

/** Runs a search somewhere: on the search thread (SearchThread), or on the caller's connection (localSearch). */
export interface SearchRunner {
  /** The answer; rejects with SearchTimeoutError past the request's deadline. */
  run(request: SearchRequest): Promise<SearchAnswer>;
  close(): void;
}

export interface SearchThreadRequest {
  id: number;
  /** The database file (the thread opens it read-only). */
  path: string;
  request: SearchRequest;
}

export type SearchReply =
  | { id: number; ok: true; answer: SearchAnswer }
  | { id: number; ok: false; timedOut: true }
  | { id: number; ok: false; timedOut: false; message: string };

/**
 * How long after a search's deadline the event loop stops waiting for the thread's answer.
 * The thread looks at the deadline between slices of SEARCH_SLICE_ROWS records (tens of
 * milliseconds each); a thread that has not answered a second later is stuck: it is
 * dropped and the next search starts another.
 */
export const SEARCH_THREAD_GRACE_MS = 1_000;

/** The longest wait setTimeout takes (a signed 32-bit count of ms; more fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Searches on the connection `db`, on the calling thread (tests, tools): the same answers, on the event loop. */
export function localSearch(db: Database, readerOf: ReaderOf): SearchRunner {
  return { run: async (request) => runSearch(db, request, readerOf), close: () => {} };
}

interface Pending {
  resolve: (answer: SearchAnswer) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class SearchThread implements SearchRunner {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {}

  run(request: SearchRequest): Promise<SearchAnswer> {
    const worker = (this.worker ??= this.spawn());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // No deadline, no watch; a wait past setTimeout's 32 bits would fire after 1 ms.
      const waitMs = Math.max(0, request.deadlineMs - Date.now()) + SEARCH_THREAD_GRACE_MS;
      const timer = waitMs <= MAX_TIMER_MS ? setTimeout(() => this.stuck(worker), waitMs) : undefined;
      // Referenced while it has work: waiting on an unreferenced worker, Bun's main thread polls and burns a core.
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, path: this.path, request } satisfies SearchThreadRequest);
    });
  }

  close(): void {
    this.worker?.terminate();
    this.worker = null;
    this.failAll(new Error("the search thread was closed"));
  }

  private spawn(): Worker {
    const worker = new Worker(SEARCH_WORKER_URL);
    worker.unref();
    worker.onmessage = (event: MessageEvent<SearchReply>) => {
      const reply = event.data;
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      if (this.pending.size === 0) worker.unref();
      if (reply.ok) p.resolve(reply.answer);
      else p.reject(reply.timedOut ? new SearchTimeoutError("the search ran past its deadline") : new Error(reply.message));
    };
    worker.onerror = (event) => {
      this.logger.error("search thread failed; the next search starts another", { err: String((event as ErrorEvent).message ?? event) });
      this.drop(worker, new Error("the search thread failed"));
    };
    return worker;
  }

  /** The thread missed a deadline by SEARCH_THREAD_GRACE_MS: its searches time out, and the next search starts another thread. */
  private stuck(worker: Worker): void {
    this.logger.warn("search thread did not answer in time; starting another", { pending: this.pending.size });
    this.drop(worker, new SearchTimeoutError("the search thread did not answer in time"));
  }

  private drop(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    // terminate() takes effect once the statement running there ends (a slice: tens of ms).
    worker.terminate();
    this.failAll(err);
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }
}
