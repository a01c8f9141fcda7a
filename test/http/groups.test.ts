// The router's groups and their middleware (src/http/groups.ts): the table every request's
// path through the router is built from, and the rules a group's middleware must keep.
import { describe, expect, test } from "bun:test";
import { AUTHENTICATION, GROUPS, type GroupPlan, planProblem } from "../../src/http/groups.ts";

describe("the router's groups", () => {
  test.each(Object.entries(GROUPS))("%s keeps the rules of a group's middleware", (_name, plan) => {
    expect(planProblem(plan)).toBeNull();
  });

  test.each([
    ["account", "account-token"],
    ["send", "sending-key"],
    ["operator", "operator-token"],
  ] as const)("%s routes authenticate first, with %s", (name, first) => {
    expect(GROUPS[name].middleware[0]).toBe(first);
  });

  test("E11 alone reads its body under its own cap, after its key and its budget", () => {
    expect(GROUPS.send.middleware).toEqual(["sending-key", "rate-limit", "send-body", "parameter-text"]);
    expect(GROUPS.account.middleware).toEqual(["account-token", "rate-limit", "json-body", "parameter-text"]);
  });

  test("every group under /api/v0.1 authenticates; the groups outside it read no body", () => {
    for (const plan of Object.values(GROUPS)) {
      const authenticates = plan.middleware.some((m) => AUTHENTICATION.has(m));
      expect(authenticates).toBe(plan.prefix.startsWith("/api/v0.1/"));
      if (!authenticates) expect(plan.middleware.filter((m) => m === "json-body" || m === "send-body")).toEqual([]);
    }
  });

  test("groups that take a caller answer 401 before 404 on paths they do not serve", () => {
    expect(GROUPS.account.catchAll).toBe(true);
    expect(GROUPS.operator.catchAll).toBe(true);
  });
});

describe("planProblem", () => {
  const plan = (...middleware: GroupPlan["middleware"]): GroupPlan => ({ prefix: "/x", middleware, catchAll: false });
  test.each([
    [plan("account-token", "rate-limit", "json-body"), null],
    [plan("parameter-text"), null],
    [plan("json-body", "account-token"), "json-body reads the body before authentication"],
    [plan("send-body"), "send-body reads the body before authentication"],
    [plan("rate-limit", "account-token"), "rate-limit runs without a caller"],
    [plan("account-token", "json-body", "send-body"), "reads its body twice (json-body, send-body)"],
    [plan("account-token", "sending-key"), "authenticates twice"],
  ])("%j: %p", (p, problem) => {
    expect(planProblem(p)).toBe(problem);
  });
});
