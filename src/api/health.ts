// GET /healthz: 200 when the store takes a durable write and the listeners are up,
// 503 otherwise, with each check named so an operator sees which one failed.
import { Elysia, t } from "elysia";
import type { ApiDeps } from "./deps.ts";

// Response schemas say additionalProperties: false themselves; Elysia would otherwise add
// it to the shared object on first use, and the OpenAPI document would change with it.
const HealthSchema = t.Object({ status: t.String(), checks: t.Record(t.String(), t.String()) }, { additionalProperties: false, title: "Health" });

export function healthRoutes(deps: ApiDeps) {
  return new Elysia({ name: "health" }).get(
    "/healthz",
    ({ set }) => {
      const report = deps.health();
      set.status = report.ok ? 200 : 503;
      return { status: report.ok ? "ok" : "failing", checks: report.checks };
    },
    {
      response: { 200: HealthSchema, 503: HealthSchema },
      detail: { operationId: "health", summary: "liveness and readiness of the appliance", tags: ["Operations"], security: [] },
    },
  );
}
