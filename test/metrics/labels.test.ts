// The label values of /metrics: each a small fixed set, whatever a client sends.
import { describe, expect, test } from "bun:test";
import {
  deliveryResult,
  inboundOutcome,
  limitRefusalReason,
  methodLabel,
  postResult,
  routeMatcher,
  statusClass,
  targetPostResult,
  UNMATCHED_ROUTE,
} from "../../src/metrics/labels.ts";

describe("statusClass", () => {
  test.each([
    [200, "2xx"],
    [202, "2xx"],
    [299, "2xx"],
    [301, "3xx"],
    [404, "4xx"],
    [429, "4xx"],
    [500, "5xx"],
    [599, "5xx"],
    [100, "1xx"],
    [99, "unknown"],
    [600, "unknown"],
    [0, "unknown"],
    [200.5, "unknown"],
  ])("%p is %p", (status, label) => {
    expect(statusClass(status)).toBe(label);
  });
});

describe("results of a POST to a target or a webhook", () => {
  test.each([
    [{ kind: "answered", status: 200, contentType: null, body: "" }, "2xx"],
    [{ kind: "answered", status: 302, contentType: null, body: "redirect refused" }, "3xx"],
    [{ kind: "answered", status: 422, contentType: null, body: "" }, "4xx"],
    [{ kind: "answered", status: 503, contentType: null, body: "" }, "5xx"],
    [{ kind: "timeout" }, "timeout"],
    [{ kind: "unreachable", reason: "ECONNREFUSED" }, "unreachable"],
  ] as const)("target outcome %j is %p", (outcome, label) => {
    expect(targetPostResult(outcome)).toBe(label);
  });

  test.each([
    [204, false, "2xx"],
    [500, false, "5xx"],
    [null, true, "timeout"],
    [null, false, "unreachable"],
  ] as const)("webhook status %p (timed out: %p) is %p", (status, timedOut, label) => {
    expect(postResult(status, timedOut)).toBe(label);
  });
});

describe("inbound outcome by the reply at the end of DATA", () => {
  test.each([
    [250, "accepted"],
    [451, "deferred"],
    [452, "deferred"],
    [550, "rejected"],
    [554, "rejected"],
  ] as const)("%p is %p", (code, outcome) => {
    expect(inboundOutcome(code)).toBe(outcome);
  });
});

describe("session limits as refusal reasons", () => {
  test.each([
    ["max_connections_per_ip", "max_connections_per_ip"],
    ["max_session_time", "max_session_time"],
    ["min_data_rate", "min_data_rate"],
    ["max_junk_commands", "max_junk_commands"],
    // Submission only, never on the inbound listener: not a reason there.
    ["auth_timeout", null],
    ["anything else", null],
  ])("%p is %p", (limit, reason) => {
    expect(limitRefusalReason(limit)).toBe(reason as never);
  });
});

describe("delivery results by the recipient's new status", () => {
  test.each([
    ["delivery", "delivered"],
    ["bounce", "bounced"],
    ["soft_bounce", "deferred"],
    ["retries_exhausted", "expired"],
    ["error", "failed"],
  ] as const)("%p is %p", (status, result) => {
    expect(deliveryResult({ status })).toBe(result);
  });
});

describe("methodLabel", () => {
  test.each([
    ["GET", "GET"],
    ["DELETE", "DELETE"],
    ["PROPFIND", "other"],
    ["get", "other"],
    ["X".repeat(1000), "other"],
  ])("%p is %p", (method, label) => {
    expect(methodLabel(method)).toBe(label);
  });
});

describe("routeMatcher: the route's pattern, never the path", () => {
  const routeOf = routeMatcher([
    { method: "GET", path: "/healthz" },
    { method: "GET", path: "/metrics" },
    { method: "GET", path: "/attachments/:id/:name" },
    { method: "GET", path: "/api/v0.1/openapi.json" },
    { method: "GET", path: "/api/v0.1/:accountId/addresses" },
    { method: "POST", path: "/api/v0.1/:accountId/addresses" },
    { method: "GET", path: "/api/v0.1/:accountId/addresses/:addressId" },
    { method: "POST", path: "/api/v0.1/:accountId/messages" },
    { method: "GET", path: "/api/v0.1/:accountId/:kind" },
    { method: "POST", path: "/api/v0.1/:accountId/sending_domains/:sendingDomainId/verify" },
    { method: "GET", path: "/files/*" },
  ]);
  test.each([
    ["GET", "/healthz", "/healthz"],
    ["HEAD", "/healthz", "/healthz"],
    ["GET", "/metrics", "/metrics"],
    ["GET", "/attachments/abc/report.pdf", "/attachments/:id/:name"],
    ["GET", "/api/v0.1/openapi.json", "/api/v0.1/openapi.json"],
    ["GET", "/api/v0.1/a000000000000001/addresses", "/api/v0.1/:accountId/addresses"],
    ["GET", "/api/v0.1/a000000000000001/addresses/", "/api/v0.1/:accountId/addresses"],
    ["POST", "/api/v0.1/a000000000000001/addresses", "/api/v0.1/:accountId/addresses"],
    ["GET", "/api/v0.1/a000000000000001/addresses/d00d", "/api/v0.1/:accountId/addresses/:addressId"],
    ["POST", "/api/v0.1/a0000000000000f1/messages", "/api/v0.1/:accountId/messages"],
    // A fixed segment beats a parameter in the same place.
    ["GET", "/api/v0.1/a000000000000001/custom_domains", "/api/v0.1/:accountId/:kind"],
    ["POST", "/api/v0.1/x/sending_domains/y/verify", "/api/v0.1/:accountId/sending_domains/:sendingDomainId/verify"],
    ["GET", "/files/a/b/c", "/files/*"],
    // What no route takes: one label, whatever the path or method.
    ["DELETE", "/healthz", UNMATCHED_ROUTE],
    ["GET", "/api/v0.1/x/addresses/y/z", UNMATCHED_ROUTE],
    ["GET", "/api/v0.1//addresses", UNMATCHED_ROUTE],
    ["GET", "/wp-login.php", UNMATCHED_ROUTE],
    ["GET", "/", UNMATCHED_ROUTE],
    ["PROPFIND", "/metrics", UNMATCHED_ROUTE],
  ])("%s %s is %p", (method, path, pattern) => {
    expect(routeOf(method, path)).toBe(pattern);
  });
});
