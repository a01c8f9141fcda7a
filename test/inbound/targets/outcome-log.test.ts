// How a target's answer is logged: named by result, at the right level; an unreachable
// target's reason once, with the URL, never its credentials or query.
import { describe, expect, test } from "bun:test";
import { outcomeLine, shownUrl, unreachableReason } from "../../../src/inbound/targets/outcome-log.ts";

describe("outcomeLine", () => {
  test.each([
    ["2xx", "successful", { msg: "inbound posted", level: "info" }],
    ["4xx", "rejected", { msg: "inbound refused by target", level: "info" }],
    ["5xx, timeout, unreachable", "delayed", { msg: "inbound deferred", level: "warn" }],
  ] as const)("%s", (_name, category, line) => {
    expect(outcomeLine({ category })).toEqual(line);
  });
});

describe("unreachableReason", () => {
  test.each([
    [
      "Bun's refused connection: the code once, without Bun's question",
      { code: "ECONNREFUSED", message: "ECONNREFUSED: Unable to connect. Is the computer able to access the url?" },
      "http://127.0.0.1:1/in",
      null,
      "ECONNREFUSED: Unable to connect (POST http://127.0.0.1:1/in)",
    ],
    [
      "a message that holds its code elsewhere",
      { code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND hooks.example" },
      "https://hooks.example/in",
      null,
      "getaddrinfo ENOTFOUND hooks.example (POST https://hooks.example/in)",
    ],
    ["a code without a message", { code: "ECONNRESET" }, "https://h.example/x", null, "ECONNRESET (POST https://h.example/x)"],
    ["a message without a code", { message: "socket closed" }, "https://h.example/x", null, "socket closed (POST https://h.example/x)"],
    ["nothing at all", {}, "https://h.example/x", null, "connection failed (POST https://h.example/x)"],
    [
      "credentials and query never shown",
      { code: "ECONNREFUSED" },
      "https://user:s3cret@h.example:8443/in?key=topsecret#frag",
      null,
      "ECONNREFUSED (POST https://h.example:8443/in)",
    ],
    [
      "a private address refused by the egress guard names the key that allows it",
      { message: "refused by the egress guard: t.test resolves to 127.0.0.1, a private, loopback or link-local address" },
      "http://t.test:8080/ok",
      "inbound.allow_private_targets",
      "refused by the egress guard: t.test resolves to 127.0.0.1, a private, loopback or link-local address (POST http://t.test:8080/ok); inbound.allow_private_targets = true allows it (tests and loopback setups only)",
    ],
  ])("%s", (_name, err, url, allowKey, reason) => {
    expect(unreachableReason(err, url, allowKey)).toBe(reason);
  });

  test("a target that is not a URL is named without quoting it", () => {
    expect(shownUrl("not a url")).toBe("(a target that is not a URL)");
  });
});
