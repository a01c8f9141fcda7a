// The dashboard's first page loads all of its JavaScript and CSS (one bundle each): their
// size, gzipped as a browser receives them over a compressing proxy, stays within the
// budget of 150 KB (docs/architecture.md). Bundled as the server bundles them.
import { expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { dashboardAssets } from "../../src/dashboard/assets.ts";

const BUDGET_BYTES = 150 * 1024;

test("the dashboard's JavaScript and CSS together are under 150 KB gzipped", async () => {
  const assets = await dashboardAssets();
  expect(assets.scripts.length).toBeGreaterThan(0);
  expect(assets.styles.length).toBeGreaterThan(0);
  const gzipped = [...assets.files.values()].reduce((n, f) => n + gzipSync(f.body).byteLength, 0);
  expect(gzipped).toBeLessThan(BUDGET_BYTES);
}, 30_000);
