import { describe, expect, test } from "bun:test";
import { maskTarget, resolveTarget, splitTarget, targetCall, targetProblem } from "../../../src/inbound/addresses/target-url.ts";

describe("targetProblem", () => {
  test.each(["https://example.com/hook", "http://user:pass@10.0.0.1:8080/x?y=1", "https://example.com"])("%p is a target", (t) =>
    expect(targetProblem(t)).toBeNull(),
  );
  test.each([
    ["ftp://example.com/x", "must be an http or https URL"],
    ["example.com/hook", "must be an http or https URL"],
    ["https://exa mple.com/", "must not contain spaces or control characters"],
    ["https://example.com/\r\nX-Injected: 1", "must not contain spaces or control characters"],
    ["https://example.com/" + "a".repeat(2100), "must be at most 2048 characters"],
  ])("%p: %p", (t, problem) => expect(targetProblem(t)).toBe(problem));
});

describe("credentials in the target", () => {
  test("the password is stored apart from the URL", () => {
    expect(splitTarget("https://us%40er:p%3Ass@example.com/in?x=1")).toEqual({
      url: "https://us%40er@example.com/in?x=1",
      password: "p:ss",
    });
    expect(splitTarget("https://example.com/in")).toEqual({ url: "https://example.com/in", password: null });
  });

  test("are removed from the URL called and sent as Basic", () => {
    expect(targetCall(splitTarget("https://us%40er:p%3Ass@example.com/in?x=1"))).toEqual({
      url: "https://example.com/in?x=1",
      authorization: "Basic " + Buffer.from("us@er:p:ss").toString("base64"),
    });
    expect(targetCall(splitTarget("https://example.com/in"))).toEqual({ url: "https://example.com/in", authorization: null });
  });

  test("read back with the password masked", () => {
    expect(maskTarget(splitTarget("https://user:secret@example.com/in"))).toBe("https://user:***@example.com/in");
    expect(maskTarget(splitTarget("https://example.com/in"))).toBe("https://example.com/in");
  });

  test("a masked password written back keeps the stored one when nothing else changed", () => {
    const stored = splitTarget("https://user:secret@example.com/in");
    expect(resolveTarget("https://user:***@example.com/in", stored)).toEqual(stored);
    expect(resolveTarget("https://user:new@example.com/in", stored)).toEqual({ url: "https://user@example.com/in", password: "new" });
    expect(resolveTarget("https://user:***@other.example/in", stored)).toBeNull();
    expect(resolveTarget("https://user:***@example.com/in", null)).toBeNull();
    expect(resolveTarget("https://example.com/in", stored)).toEqual({ url: "https://example.com/in", password: null });
  });
});
