import { describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { MAX_RESTARTS, WorkerPool } from "../../src/lib/worker-pool.ts";
import { eventually } from "../helpers/sink.ts";

type Job = { n: number; fail?: boolean; crash?: boolean; bytes?: Uint8Array };
type Reply = { id: number; ok: true; value: number; by: string } | { id: number; ok: false; message: string };
type Result = { value: number; by: string };

const URL_OK = new URL("../helpers/pool-worker.ts", import.meta.url).href;

function pool(size: number, url = URL_OK, encode?: (job: Job) => { message: object; transfer: ArrayBuffer[] }) {
  const lines: string[] = [];
  const p = new WorkerPool<Job, Reply, Result>({
    encode,
    url,
    size,
    logger: createLogger({ sink: (l) => lines.push(l) }),
    work: { name: "doubling", doing: "doubling" },
    onMainThread: async (job) => ({ value: job.n * 2, by: "main" }),
    resultOf: (reply) => {
      if (!reply.ok) throw new Error(reply.message);
      return { value: reply.value, by: reply.by };
    },
    unrefWhenIdle: true,
  });
  return { p, lines };
}

describe("WorkerPool", () => {
  // A view posted as it is takes its whole buffer along (structured clone): 100 bytes of a
  // 1 MB buffer cost 1 MB. Encoded, the worker gets the 100 bytes, handed over, and the
  // job keeps its own (for the main thread, should the worker fail).
  test("encode decides what is posted and what is handed over", async () => {
    const view = new Uint8Array(1024 * 1024).subarray(100, 200);
    const plain = pool(1);
    const encoded = pool(1, URL_OK, (job) => {
      const bytes = new Uint8Array(job.bytes!);
      return { message: { ...job, bytes }, transfer: [bytes.buffer] };
    });
    try {
      expect((await plain.p.run({ n: 0, bytes: view })).value).toBe(1024 * 1024);
      expect((await encoded.p.run({ n: 0, bytes: view })).value).toBe(100);
      expect(view.byteLength).toBe(100);
    } finally {
      plain.p.close();
      encoded.p.close();
    }
  });

  test("starts its workers on the first job, and jobs in flight together go to the least busy worker", async () => {
    const { p } = pool(2);
    try {
      expect(p.running).toBe(0);
      const results = await Promise.all([1, 2, 3, 4].map((n) => p.run({ n })));
      expect(p.running).toBe(2);
      expect(results.map((r) => r.value)).toEqual([2, 4, 6, 8]);
      const [a, b, c, d] = results.map((r) => r.by);
      expect(a).not.toBe("main");
      expect(b).not.toBe(a);
      expect([c, d]).toEqual([a, b]);
    } finally {
      p.close();
    }
  });

  test("a worker's refusal rejects that job only", async () => {
    const { p } = pool(1);
    try {
      const [refused, done] = await Promise.allSettled([p.run({ n: 1, fail: true }), p.run({ n: 2 })]);
      expect(refused).toMatchObject({ status: "rejected", reason: new Error("refused 1") });
      expect(done).toMatchObject({ status: "fulfilled", value: { value: 4 } });
    } finally {
      p.close();
    }
  });

  test("a worker that fails gives its jobs to the main thread and is replaced; after MAX_RESTARTS more, the pool gives up on workers", async () => {
    const { p, lines } = pool(1);
    try {
      for (let i = 1; i <= MAX_RESTARTS; i++) {
        // The crashing job and the one in flight with it are done on the main thread: none is lost.
        const [crashed, other] = await Promise.all([p.run({ n: 10, crash: true }), p.run({ n: 11 })]);
        expect(crashed).toEqual({ value: 20, by: "main" });
        expect(other.value).toBe(22);
        expect(p.running).toBe(1);
        expect(lines.filter((l) => l.includes("doubling worker failed; starting another"))).toHaveLength(i);
        expect((await p.run({ n: 1 })).by).not.toBe("main");
      }
      expect(await p.run({ n: 10, crash: true })).toEqual({ value: 20, by: "main" });
      expect(p.running).toBe(0);
      expect(lines.some((l) => l.includes("doubling worker failed again; doubling on the main thread from now on"))).toBe(true);
      expect(await p.run({ n: 3 })).toEqual({ value: 6, by: "main" });
    } finally {
      p.close();
    }
  });

  test("with no workers configured, every job runs on the main thread", async () => {
    const { p } = pool(0);
    expect(await p.run({ n: 5 })).toEqual({ value: 10, by: "main" });
    expect(p.running).toBe(0);
  });

  test("a worker that cannot load is given up on like one that fails, and no job is lost", async () => {
    const { p, lines } = pool(1, new URL("../helpers/no-such-worker.ts", import.meta.url).href);
    try {
      const results = await Promise.all([1, 2].map((n) => p.run({ n })));
      expect(results.map((r) => r.value)).toEqual([2, 4]);
      await eventually(() => lines.some((l) => l.includes("doubling worker failed again")), 5000, "the pool giving up");
      expect(await p.run({ n: 3 })).toEqual({ value: 6, by: "main" });
    } finally {
      p.close();
    }
  });
});
