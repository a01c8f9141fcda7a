// contrib/: the Grafana dashboard and the Prometheus alert rules read metrics a real
// Postroom serves, in valid PromQL, and the alerts fire where they say they do.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DASHBOARD = join(ROOT, "contrib/grafana/postroom.json");
const ALERTS = join(ROOT, "contrib/prometheus/alerts.yml");
const METRICS_TOKEN = "pr_metrics_token_for_tests";
const promtoolTest = requireTools("promtool");
const dir = tempDir();

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; refId: string }[];
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
};
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, ...t })));
const alertsText = readFileSync(ALERTS, "utf8");

/** The metric names a PromQL text reads: Postroom's, and the process's and runtime's. */
const metricNames = (promql: string): string[] => [...new Set(promql.match(/\b(?:postroom|process|nodejs)_[a-z0-9_]+\b/g) ?? [])];

/** Grafana's variables as Prometheus itself would see a query: a range and a matcher. */
const asPrometheusSees = (expr: string) => expr.replaceAll("$__rate_interval", "5m").replaceAll("$instance", ".+");

async function runPromtool(args: string[]): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(["promtool", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, output: out + err };
}

let t: TestApp;
/** Metric families of a real scrape, with their types. */
let families: Map<string, string>;

beforeAll(async () => {
  t = await startTestApp({ http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"` });
  families = (await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN)).families;
});
afterAll(async () => {
  await t.stop();
  dir.remove();
});

/** Names not served: neither a family, nor a histogram's _bucket, _sum or _count. */
function unknownNames(names: readonly string[]): string[] {
  return names.filter((name) => {
    if (families.has(name)) return false;
    const base = name.replace(/_(bucket|sum|count)$/, "");
    return !(base !== name && families.get(base) === "histogram");
  });
}

describe("contrib/grafana/postroom.json", () => {
  test("is a dashboard: a title and uid, the data source and instance variables, panels with unique ids that do not overlap", () => {
    expect(dashboard.uid).toBe("postroom");
    expect(dashboard.title).toBe("Postroom");
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "instance"]);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const overlapping: string[] = [];
    for (const [i, a] of dashboard.panels.entries()) {
      expect(a.gridPos.x + a.gridPos.w).toBeLessThanOrEqual(24);
      for (const b of dashboard.panels.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        if (!apart) overlapping.push(`${a.title} / ${b.title}`);
      }
    }
    expect(overlapping).toEqual([]);
    // Every panel but the rows shows at least one query.
    expect(dashboard.panels.filter((p) => p.type !== "row" && !(p.targets?.length ?? 0))).toEqual([]);
  });

  test("every metric its queries read is served by a real Postroom", () => {
    const names = metricNames(queries.map((q) => q.expr).join("\n"));
    expect(names.length).toBeGreaterThan(20);
    expect(unknownNames(names)).toEqual([]);
  });

  test("the metrics an operator needs are all on it", () => {
    const shown = new Set(metricNames(queries.map((q) => q.expr).join("\n")).map((n) => n.replace(/_(bucket|sum|count)$/, "")));
    const postroom = [...families.keys()].filter((n) => n.startsWith("postroom_"));
    expect(postroom.filter((n) => !shown.has(n))).toEqual([]);
  });

  promtoolTest("every query is valid PromQL (promtool check rules, each as a recording rule)", async () => {
    const rules = {
      groups: [
        {
          name: "dashboard",
          rules: queries.map((q) => ({ record: `dashboard:panel_${q.panel.id}_${q.refId}`, expr: asPrometheusSees(q.expr) })),
        },
      ],
    };
    const file = join(dir.path, "dashboard-rules.yml");
    writeFileSync(file, JSON.stringify(rules));
    const result = await runPromtool(["check", "rules", file]);
    expect(result).toEqual({ code: 0, output: expect.stringContaining(`SUCCESS: ${queries.length} rules found`) });
  });
});

describe("contrib/prometheus/alerts.yml", () => {
  test("every metric its rules read is served by a real Postroom", () => {
    const names = metricNames(alertsText);
    expect(names).toContain("postroom_tls_certificate_expiry_timestamp_seconds");
    expect(unknownNames(names)).toEqual([]);
  });

  promtoolTest("promtool check rules accepts it", async () => {
    const result = await runPromtool(["check", "rules", ALERTS]);
    expect(result).toEqual({ code: 0, output: expect.stringContaining("SUCCESS: 8 rules found") });
  });

  promtoolTest(
    "promtool test rules: queue age, target failures, certificate expiry, webhook backlog, complaint rate and listed IPs fire past their thresholds, not before",
    async () => {
      const result = await runPromtool(["test", "rules", join(ROOT, "test/contrib/alerts.test.yml")]);
      expect(result).toEqual({ code: 0, output: expect.stringContaining("SUCCESS") });
    },
  );
});
