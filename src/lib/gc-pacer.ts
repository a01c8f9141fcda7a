// Large mail leaves large garbage behind as it goes through: the socket's chunks once DATA
// is copied out of them, the MIME parser's strings (its Base64 decoder makes three or four
// of every line), the Base64 slices of a streamed POST. JavaScriptCore collects it late:
// while a 25 MB message was parsed, 60-100 MB of it piled up (for a parse that keeps
// 18 MB), so memory grew with the garbage, not with what is held (issue 15). Here the
// code that makes such garbage says how much, and after every GC_STEP_BYTES of it a full
// collection runs at once: a few tens of milliseconds per 32 MB of large mail, nothing for
// small messages (their paths never call this). One pacer per thread, as each thread
// (a parse worker) has a heap of its own.

/** Bytes of garbage after which a collection runs. */
export const GC_STEP_BYTES = 32 * 1024 * 1024;

/** Messages at least this large have their garbage counted. */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;

let owed = 0;
let collections = 0;

/** `bytes` of garbage were just made (or are about to be, by what runs next). */
export function garbageMade(bytes: number): void {
  owed += bytes;
  if (owed < GC_STEP_BYTES) return;
  owed = 0;
  collections++;
  Bun.gc(true);
}

/** Collections run so far in this thread (tests, the benchmark's report). */
export const paceCollections = (): number => collections;
