// The process and runtime metrics (prom-client's default collectors), once per process:
// they describe the process, not one App, and the event-loop monitor runs a timer of its
// own, which one App per test would multiply. Every default collector registers and
// scrapes without error under Bun; those that read what Bun does not have are removed
// (NOT_UNDER_BUN), so that no series is a constant that looks like a measurement.
import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * Bun has no libuv handle and request lists (the active handles, requests and resources
 * gauges read 0; their _total gauges also fail `promtool check metrics`), no V8 heap
 * spaces (all 0 but one), no GC performance entries (the histogram stays empty), and
 * process.version is the Node.js version it imitates (postroom_build_info names Bun's).
 */
export const NOT_UNDER_BUN = [
  "nodejs_active_resources",
  "nodejs_active_resources_total",
  "nodejs_active_handles",
  "nodejs_active_handles_total",
  "nodejs_active_requests",
  "nodejs_active_requests_total",
  "nodejs_heap_space_size_total_bytes",
  "nodejs_heap_space_size_used_bytes",
  "nodejs_heap_space_size_available_bytes",
  "nodejs_gc_duration_seconds",
  "nodejs_version_info",
];

let registry: Registry | null = null;

/** Made when the first App is, so the event-loop monitor has samples by the first scrape. */
export function processRegistry(): Registry {
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
    for (const name of NOT_UNDER_BUN) registry.removeSingleMetric(name);
  }
  return registry;
}
