import { describe, expect, test } from "bun:test";
import { parseDurationMs, parseListen, parseRate, parseSizeBytes } from "../../src/config/units.ts";

describe("parseDurationMs", () => {
  test.each([
    ["250ms", 250],
    ["30s", 30_000],
    ["5m", 300_000],
    ["5min", 300_000],
    ["2h", 7_200_000],
    ["5d", 432_000_000],
    ["1.5s", 1500],
    [" 10s ", 10_000],
    ["0s", 0],
  ])("%p is %p ms", (text, ms) => expect(parseDurationMs(text)).toBe(ms));
  test.each(["", "30", "s", "-1s", "5 weeks", "1e3s", "10S"])("%p is refused", (text) => expect(parseDurationMs(text)).toBeNull());
});

describe("parseSizeBytes", () => {
  test.each([
    ["512B", 512],
    ["1KB", 1024],
    ["1kb", 1024],
    ["25MB", 25 * 1024 * 1024],
    ["25MiB", 25 * 1024 * 1024],
    ["1GB", 1024 ** 3],
    ["1.5KB", 1536],
  ])("%p is %p bytes", (text, bytes) => expect(parseSizeBytes(text)).toBe(bytes));
  test.each(["", "25", "MB", "25TB", "-1MB", "25 megabytes"])("%p is refused", (text) => expect(parseSizeBytes(text)).toBeNull());
});

describe("parseRate", () => {
  test.each([
    ["5/min", { limit: 5, windowMs: 60_000 }],
    ["5/m", { limit: 5, windowMs: 60_000 }],
    ["10/s", { limit: 10, windowMs: 1000 }],
    ["100/h", { limit: 100, windowMs: 3_600_000 }],
    [" 7 / min ", { limit: 7, windowMs: 60_000 }],
  ])("%p", (text, rate) => expect(parseRate(text)).toEqual(rate));
  test("off is no limit", () => expect(parseRate("off")).toBeNull());
  test.each(["0/min", "5", "5/day", "five/min", ""])("%p is refused", (text) => expect(parseRate(text)).toBeUndefined());
});

describe("parseListen", () => {
  test.each([
    ["0.0.0.0:25", { host: "0.0.0.0", port: 25 }],
    ["127.0.0.1:0", { host: "127.0.0.1", port: 0 }],
    ["[::]:587", { host: "::", port: 587 }],
    ["[::1]:8080", { host: "::1", port: 8080 }],
    ["localhost:2525", { host: "localhost", port: 2525 }],
  ])("%p", (text, addr) => expect(parseListen(text)).toEqual(addr));
  test.each(["25", ":25", "host:", "host:70000", "::1:25", "a b:25"])("%p is refused", (text) => expect(parseListen(text)).toBeNull());
});
