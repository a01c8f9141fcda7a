import { expect, test } from "bun:test";
import { perConfig } from "../../src/config/per-config.ts";

test("perConfig builds once per config object and again after a reload swaps it", () => {
  let current = { port: 1 };
  const builds: number[] = [];
  const derived = perConfig(
    () => current,
    (c) => {
      builds.push(c.port);
      return { port: c.port };
    },
  );
  const first = derived();
  expect(derived()).toBe(first);
  current = { port: 2 };
  expect(derived()).toEqual({ port: 2 });
  expect(derived()).toBe(derived());
  expect(builds).toEqual([1, 2]);
});
