// GET /healthz: 200 when the store takes a durable write and the listeners are up,
// 503 otherwise, with each check named so an operator sees which one failed.
import { Elysia, t } from "elysia";
import type { ApiDeps } from "./deps.ts";

export function healthRoutes(deps: ApiDeps) {
  return new Elysia({ name: "health" }).get(
    "/healthz",
    ({ set }) => {
      const report = deps.health();
      set.status = report.ok ? 200 : 503;
      return { status: report.ok ? "ok" : "failing", checks: report.checks };
    },
    {
      response: { 200: t.Object({ status: t.String(), checks: t.Record(t.String(), t.String()) }), 503: t.Object({ status: t.String(), checks: t.Record(t.String(), t.String()) }) },
      detail: { operationId: "health", summary: "liveness and readiness of the appliance", tags: ["Operations"], security: [] },
    },
  );
}
