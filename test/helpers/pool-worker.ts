// Worker thread entry for test/lib/worker-pool.test.ts: doubles `n`, answers a refusal
// when asked, and dies (an uncaught error) when told to crash. Given `bytes`, it answers
// the size of the memory they arrived in instead.
declare const self: Worker;

const identity = crypto.randomUUID();

self.onmessage = (event: MessageEvent<{ id: number; n: number; fail?: boolean; crash?: boolean; bytes?: Uint8Array }>) => {
  const { id, n, fail, crash, bytes } = event.data;
  if (crash) throw new Error("worker crashed on purpose");
  if (bytes) return self.postMessage({ id, ok: true, value: bytes.buffer.byteLength, by: identity });
  // Answered a moment later, so that jobs posted together are in flight together.
  setTimeout(() => self.postMessage(fail ? { id, ok: false, message: `refused ${n}` } : { id, ok: true, value: n * 2, by: identity }), 20);
};
