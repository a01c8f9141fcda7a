// GET /healthz: 200 when the store takes a durable write and the listeners are up,
// 503 otherwise, with each check named so an operator sees which one failed, and
// warnings (a certificate expiring within tls.expiry_warning) that keep the 200. It names
// the node that answered (cluster.node_id), so behind a load balancer one sees which node
// of several sharing a store is failing.
import { Elysia, t } from "elysia";
import type { ApiDeps, HealthReport } from "./deps.ts";

/**
 * The report: the store must take a durable write and every listener be up; `warnings`
 * (trouble ahead, such as a certificate about to expire) keep it ok.
 */
export function healthReport(
  store: { checkWritable(nowMs: number): void },
  listenerChecks: Record<string, string>,
  warnings: string[],
  nowMs: number,
): HealthReport {
  const checks: Record<string, string> = {};
  try {
    store.checkWritable(nowMs);
    checks.store = "ok";
  } catch (err) {
    checks.store = `not writable: ${(err as Error).message}`;
  }
  Object.assign(checks, listenerChecks);
  return { ok: Object.values(checks).every((v) => v === "ok"), checks, warnings };
}

// Response schemas say additionalProperties: false themselves; Elysia would otherwise add
// it to the shared object on first use, and the OpenAPI document would change with it.
const HealthSchema = t.Object(
  {
    status: t.String({ description: '"ok" or "failing"' }),
    node: t.String({ description: "the node that answered: cluster.node_id, or its hostname when that is empty" }),
    checks: t.Record(t.String(), t.String(), { description: 'each check and "ok" or what is wrong' }),
    warnings: t.Array(t.String(), { description: "trouble ahead that does not fail the check yet, such as a certificate about to expire" }),
  },
  { additionalProperties: false, title: "Health" },
);

/** What the routes take of the API's dependencies. */
export type HealthDeps = Pick<ApiDeps, "health" | "nodeId">;

export function healthRoutes(deps: HealthDeps) {
  return new Elysia({ name: "health" }).get(
    "/healthz",
    ({ set }) => {
      const report = deps.health();
      set.status = report.ok ? 200 : 503;
      return { status: report.ok ? "ok" : "failing", node: deps.nodeId, checks: report.checks, warnings: report.warnings };
    },
    {
      response: { 200: HealthSchema, 503: HealthSchema },
      detail: { operationId: "health", summary: "liveness and readiness of the appliance", tags: ["Operations"], security: [] },
    },
  );
}
