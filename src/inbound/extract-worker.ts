// Worker thread entry: extracts the messages the pool sends (extract-pool.ts).
import { extractMessage } from "./extract.ts";
import { MessageRefused, type ParseLimits } from "./parse.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ id: number; raw: Uint8Array; limits: ParseLimits; traceBytes: number }>) => {
  const { id, raw, limits, traceBytes } = event.data;
  try {
    // Attachments are copied back, not transferred: mailparser's buffers may share memory.
    const result = await extractMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), limits, traceBytes);
    self.postMessage({ id, ok: true, result });
  } catch (err) {
    self.postMessage({ id, ok: false, refusal: err instanceof MessageRefused ? err.reply : null, message: (err as Error).message });
  }
};
