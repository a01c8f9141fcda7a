// Worker thread entry: extracts, examines or checks the messages the pool sends
// (extract-pool.ts). Its sender checks ask DNS through a resolver of its own, made with the
// main resolver's options, so their caches (answers, SPF and DMARC verdicts) are this thread's.
import { createResolver, type ResolverOptions } from "../../lib/dns.ts";
import { AuthChecker } from "./auth-checks.ts";
import { doJob, type ExtractJob, type ExtractReply } from "./extract-pool.ts";
import { MessageRefused } from "./parse.ts";

declare const self: Worker;

const TRANSFER_FROM_BYTES = 64 * 1024;

/** One checker per resolver the main thread has had (one, unless it is replaced). */
const checkers = new Map<string, AuthChecker>();
function checkerFor(options: ResolverOptions): AuthChecker {
  const key = JSON.stringify(options);
  let checker = checkers.get(key);
  if (!checker) checkers.set(key, (checker = new AuthChecker(createResolver(options))));
  return checker;
}

self.onmessage = async (event: MessageEvent<ExtractJob & { id: number; raw: Uint8Array }>) => {
  const { id } = event.data;
  const job = { ...event.data, raw: Buffer.from(event.data.raw.buffer, event.data.raw.byteOffset, event.data.raw.byteLength) };
  try {
    const result = await doJob(job, () => checkerFor((job as { resolver: ResolverOptions }).resolver));
    // A large attachment that has its memory to itself is handed over, not copied (issue
    // 15); the rest are copied back, as small buffers may share memory (Buffer's pool).
    const handed = new Set<ArrayBuffer>();
    for (const a of result.extracted?.content.attachments ?? []) {
      const buffer = a.content.buffer as ArrayBuffer;
      if (a.content.byteLength >= TRANSFER_FROM_BYTES && a.content.byteOffset === 0 && a.content.byteLength === buffer.byteLength)
        handed.add(buffer);
    }
    const reply: ExtractReply = { id, ok: true, ...result };
    self.postMessage(reply, [...handed]);
  } catch (err) {
    const reply: ExtractReply = {
      id,
      ok: false,
      refusal: err instanceof MessageRefused ? err.reply : null,
      message: (err as Error).message,
    };
    self.postMessage(reply);
  }
};
