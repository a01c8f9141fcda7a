// The timer runs on Bun's fake timers: time moves when the test says, so what is counted
// does not depend on how busy the machine is, and a plan 5 s away is checked in no time.
import { afterEach, expect, jest, test } from "bun:test";
import { WakeTimer } from "../../src/lib/wake-timer.ts";

afterEach(() => jest.useRealTimers());

test("a sooner wake-up moves the run earlier; a later one never puts it off; one run per plan", () => {
  jest.useFakeTimers();
  let runs = 0;
  const timer = new WakeTimer(() => runs++);
  timer.wake(5_000);
  timer.wake(5);
  jest.advanceTimersByTime(4);
  expect(runs).toBe(0);
  jest.advanceTimersByTime(1);
  expect(runs).toBe(1);
  // The 5 s plan was replaced by the sooner one, not kept beside it.
  jest.advanceTimersByTime(10_000);
  expect(runs).toBe(1);

  timer.wake(5);
  timer.wake(5_000);
  timer.wake(5_000);
  jest.advanceTimersByTime(5);
  expect(runs).toBe(2);
  jest.advanceTimersByTime(10_000);
  expect(runs).toBe(2);

  timer.wake(5);
  timer.cancel();
  jest.advanceTimersByTime(10_000);
  expect(runs).toBe(2);
});
