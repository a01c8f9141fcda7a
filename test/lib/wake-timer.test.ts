import { expect, test } from "bun:test";
import { WakeTimer } from "../../src/lib/wake-timer.ts";

test("a sooner wake-up moves the run earlier; a later one never puts it off; one run per plan", async () => {
  let runs = 0;
  const timer = new WakeTimer(() => runs++);
  timer.wake(5_000);
  timer.wake(5);
  await Bun.sleep(60);
  expect(runs).toBe(1);
  timer.wake(5);
  timer.wake(5_000);
  timer.wake(5_000);
  await Bun.sleep(60);
  expect(runs).toBe(2);
  timer.wake(5);
  timer.cancel();
  await Bun.sleep(60);
  expect(runs).toBe(2);
});
