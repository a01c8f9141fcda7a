// The lease holders' heartbeat: a beat every third of the lease time (read at each beat),
// one at a time; a beat that fails is logged and the next one still comes; stop ends the
// beats; quiet() waits for the beat under way.
import { describe, expect, test } from "bun:test";
import { BEATS_PER_LEASE, Heartbeat } from "../../src/lib/heartbeat.ts";
import { createLogger, silentLogger } from "../../src/lib/logger.ts";

describe("Heartbeat", () => {
  test("beats every third of the lease, from start until stop", async () => {
    const beats: number[] = [];
    const startedMs = performance.now();
    const h = new Heartbeat(
      async () => void beats.push(performance.now() - startedMs),
      () => 90,
      silentLogger,
      "test",
    );
    h.start();
    await Bun.sleep(200);
    h.stop();
    const count = beats.length;
    await Bun.sleep(100);
    expect(BEATS_PER_LEASE).toBe(3);
    // At 30, 60, 90... ms: six in 200 ms, give or take a timer's lateness.
    expect(count).toBeGreaterThanOrEqual(3);
    expect(count).toBeLessThanOrEqual(7);
    expect(beats[0]!).toBeGreaterThanOrEqual(29);
    expect(beats.length).toBe(count);
  });

  test("a beat that fails is logged, and the next beat comes all the same", async () => {
    const lines: { msg: string; level: string }[] = [];
    let calls = 0;
    const h = new Heartbeat(
      async () => {
        calls++;
        if (calls === 1) throw new Error("the store is away");
      },
      () => 30,
      createLogger({ level: "warn", sink: (l) => lines.push(JSON.parse(l)) }),
      "recipient",
    );
    h.start();
    await Bun.sleep(100);
    h.stop();
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(lines[0]).toMatchObject({ level: "warn", msg: "recipient lease renewal failed; the next beat tries again" });
  });

  test("one beat at a time: a slow beat delays the next; quiet() waits for the one under way", async () => {
    let running = 0;
    let most = 0;
    let done = 0;
    const h = new Heartbeat(
      async () => {
        most = Math.max(most, ++running);
        await Bun.sleep(50);
        running--;
        done++;
      },
      () => 15,
      silentLogger,
      "test",
    );
    h.start();
    await Bun.sleep(20);
    h.stop();
    await h.quiet();
    expect(done).toBe(1);
    expect(most).toBe(1);
  });

  test("the lease time is read at every beat (a config reload)", async () => {
    let leaseMs = 30;
    let beats = 0;
    const h = new Heartbeat(
      async () => void beats++,
      () => leaseMs,
      silentLogger,
      "test",
    );
    h.start();
    await Bun.sleep(25);
    // Beats 10 ms apart so far; the one already planned still comes, then one a second apart.
    leaseMs = 3000;
    await Bun.sleep(20);
    const afterReload = beats;
    await Bun.sleep(150);
    h.stop();
    expect(afterReload).toBeGreaterThanOrEqual(2);
    expect(beats).toBe(afterReload);
  });
});
