// The node that answers: GET /healthz names it and /metrics labels postroom_node_info with
// it, from cluster.node_id, or the machine's hostname when that is left "". Over the real
// HTTP listener, as a load balancer or Prometheus reaches several nodes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { hashSecret } from "../../src/auth/secrets.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";

const METRICS_TOKEN = "pr_metrics_token_for_node_tests";
let named: TestApp;
let unnamed: TestApp;

beforeAll(async () => {
  const http = `metrics_token = "${hashSecret(METRICS_TOKEN)}"`;
  named = await startTestApp({ http, extra: '[cluster]\nnode_id = "mx-2.eu_west"' });
  unnamed = await startTestApp({ http });
});
afterAll(async () => {
  await named.stop();
  await unnamed.stop();
});

const healthOf = async (t: TestApp) => {
  const res = await fetch(`http://127.0.0.1:${t.app.httpPort}/healthz`);
  return { status: res.status, body: (await res.json()) as { status: string; node: string } };
};

describe("a node with cluster.node_id", () => {
  test("/healthz answers it as node", async () => {
    const health = await healthOf(named);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: "ok", node: "mx-2.eu_west" });
  });

  test('/metrics serves postroom_node_info{node="mx-2.eu_west"} 1', async () => {
    const scrape = await scrapeMetrics(named.app.httpPort!, METRICS_TOKEN);
    expect(scrape.text).toContain('postroom_node_info{node="mx-2.eu_west"} 1\n');
    expect(scrape.families.get("postroom_node_info")).toBe("gauge");
  });
});

describe('a node with cluster.node_id = "" (the default)', () => {
  test("/healthz answers the machine's hostname", async () => {
    expect((await healthOf(unnamed)).body.node).toBe(hostname());
  });

  test("/metrics labels postroom_node_info with the hostname", async () => {
    const scrape = await scrapeMetrics(unnamed.app.httpPort!, METRICS_TOKEN);
    expect(scrape.value("postroom_node_info", { node: hostname() })).toBe(1);
  });
});
