// Which URLs a webhook endpoint may have (endpointUrlProblem): the config webhook's rule
// (an http or https URL), no credentials, and an IP literal judged by the egress guard
// at once, with webhooks.allow_private named where it would allow it.
import { describe, expect, test } from "bun:test";
import { endpointUrlProblem } from "../../src/api/webhook-endpoints.ts";

describe("endpointUrlProblem", () => {
  test.each([
    ["https://app.example.com/mail-events", false, null],
    ["http://hooks.example.com:8080/x?k=1", false, null],
    ["http://127.0.0.1:9000/hook", true, null],
    ["ftp://hooks.example.com/x", false, "must be an http or https URL"],
    ["not a url", false, "must not contain spaces or control characters"],
    ["https://hooks.example.com/a\u0000b", false, "must not contain spaces or control characters"],
    [`https://hooks.example.com/${"a".repeat(2100)}`, false, "must be at most 2048 characters"],
    ["https://user:pw@hooks.example.com/x", false, "must not carry credentials; give them as token (sent as Authorization: Bearer)"],
    ["http://127.0.0.1:9000/hook", false, expect.stringContaining("webhooks.allow_private")],
    ["http://[::1]/hook", false, expect.stringContaining("webhooks.allow_private")],
    ["http://10.1.2.3/hook", false, expect.stringContaining("webhooks.allow_private")],
    ["http://169.254.169.254/latest/meta-data", true, expect.stringMatching(/^points at .+ \(169\.254\.169\.254\)$/)],
  ] as [string, boolean, unknown][])("%j (allow_private %p) → %p", (url, allowPrivate, problem) => {
    expect(endpointUrlProblem(url, allowPrivate)).toEqual(problem as never);
  });
});
