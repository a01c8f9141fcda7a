// Worker thread entry: extracts the messages the pool sends (extract-pool.ts).
import { extractMessage } from "./extract.ts";
import { MessageRefused, type ParseLimits } from "./parse.ts";

declare const self: Worker;

const TRANSFER_FROM_BYTES = 64 * 1024;

self.onmessage = async (event: MessageEvent<{ id: number; raw: Uint8Array; limits: ParseLimits; traceBytes: number }>) => {
  const { id, raw, limits, traceBytes } = event.data;
  try {
    const result = await extractMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), limits, traceBytes);
    // A large attachment that has its memory to itself is handed over, not copied (issue
    // 15); the rest are copied back, as small buffers may share memory (Buffer's pool).
    const handed = new Set<ArrayBuffer>();
    for (const a of result.content.attachments) {
      const buffer = a.content.buffer as ArrayBuffer;
      if (a.content.byteLength >= TRANSFER_FROM_BYTES && a.content.byteOffset === 0 && a.content.byteLength === buffer.byteLength)
        handed.add(buffer);
    }
    self.postMessage({ id, ok: true, result }, [...handed]);
  } catch (err) {
    self.postMessage({ id, ok: false, refusal: err instanceof MessageRefused ? err.reply : null, message: (err as Error).message });
  }
};
