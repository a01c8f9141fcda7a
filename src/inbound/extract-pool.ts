// A small pool of worker threads for message extraction (MIME parsing and reply
// extraction are the costliest CPU work per message). With no workers configured, or if
// a worker cannot start, extraction runs on the main thread: same result, less throughput.
import type { Logger } from "../lib/logger.ts";
import type { SmtpReply } from "../lib/smtp-reply.ts";
import { extractMessage, type ExtractedMessage } from "./extract.ts";
import { EXTRACT_WORKER_URL } from "../workers.ts";
import { MessageRefused, type ParseLimits } from "./parse.ts";

interface Pending {
  raw: Buffer;
  limits: ParseLimits;
  traceBytes: number;
  resolve: (r: ExtractedMessage) => void;
  reject: (e: unknown) => void;
}

/** Restarts allowed within RESTART_WINDOW_MS before the pool gives up on workers. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;

type Reply = { id: number; ok: true; result: ExtractedMessage } | { id: number; ok: false; refusal: SmtpReply | null; message: string };

/** Structured clone turns Buffers into Uint8Arrays; give attachments back their Buffer type. */
function revive(result: ExtractedMessage): ExtractedMessage {
  for (const a of result.content.attachments) {
    const u8 = a.content as unknown as Uint8Array;
    a.content = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  }
  return result;
}

class ExtractWorker {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();

  constructor(onCrash: (w: ExtractWorker, err: unknown) => void) {
    this.worker = new Worker(EXTRACT_WORKER_URL);
    this.worker.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (reply.ok) p.resolve(revive(reply.result));
      else p.reject(reply.refusal ? new MessageRefused(reply.refusal) : new Error(reply.message));
    };
    this.worker.onerror = (event) => onCrash(this, event);
  }
}

export class ExtractPool {
  private workers: ExtractWorker[] = [];
  private nextId = 1;
  private restarts: number[] = [];

  constructor(
    size: number,
    private readonly logger: Logger,
  ) {
    for (let i = 0; i < size; i++) this.spawn();
  }

  private spawn(): void {
    try {
      this.workers.push(new ExtractWorker((w, err) => this.crashed(w, err)));
    } catch (err) {
      this.logger.warn("extraction worker did not start; extracting on the main thread", { err });
    }
  }

  private crashed(w: ExtractWorker, err: unknown): void {
    this.workers = this.workers.filter((x) => x !== w);
    w.worker.terminate();
    // The messages it held are extracted here instead: a worker failure loses no mail.
    for (const p of w.pending.values()) extractMessage(p.raw, p.limits, p.traceBytes).then(p.resolve, p.reject);
    const now = Date.now();
    this.restarts = [...this.restarts.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const giveUp = this.restarts.length > MAX_RESTARTS;
    this.logger.error(giveUp ? "extraction worker failed again; extracting on the main thread from now on" : "extraction worker failed; starting another", {
      err: String((err as ErrorEvent)?.message ?? err),
    });
    if (!giveUp) this.spawn();
  }

  /** Worker threads running now (0: extraction on the main thread). */
  get workerCount(): number {
    return this.workers.length;
  }

  extract(raw: Buffer, limits: ParseLimits, traceBytes = 0): Promise<ExtractedMessage> {
    if (this.workers.length === 0) return extractMessage(raw, limits, traceBytes);
    // The least busy worker takes it.
    const w = this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      w.pending.set(id, { raw, limits, traceBytes, resolve, reject });
      w.worker.postMessage({ id, raw, limits, traceBytes });
    });
  }

  async close(): Promise<void> {
    for (const w of this.workers) w.worker.terminate();
    this.workers = [];
  }
}
