// Searches cannot freeze the server (issue 31): the built binary on fixed ports with
// 40,000 sent messages; three slow searches at once (60 terms, each matching every message
// but the last, over a window of the whole list) run off the event loop, so /healthz and
// an SMTP greeting still answer within 500 ms while they run; each stops at
// http.search_timeout with 503 saying so; a narrow search still answers from the search
// thread (the worker file is in the binary). Before the fix the searches ran on the event
// loop: /healthz and the greeting waited for all three.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import { openStore } from "../../src/store/store.ts";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";

const MESSAGES = 40_000;
const TIMEOUT_MS = 1_500;
/** The longest /healthz or an SMTP greeting may take while the searches run. */
const PROBE_BOUND_MS = 500;
const T0 = Date.parse("2026-11-01T00:00:00Z");

let appliance: BinaryAppliance;

beforeAll(async () => {
  appliance = await startBinaryAppliance({ http: `search_window = 100000\nsearch_max_terms = 100\nsearch_timeout = "${TIMEOUT_MS}ms"` });
  // Sent messages of account A's outbound account, delivered (nothing for the server to send), written beside the running server as its own commits would be.
  const store = openStore(appliance.dataDir);
  try {
    const repo = createOutboundRepo(store, queuePorts(store));
    for (let from = 0; from < MESSAGES; from += 2_000) {
      await Promise.all(
        Array.from({ length: 2_000 }, (_, j) => {
          const i = from + j;
          const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
          const message = queuedMessage(id, {
            accountId: ACCOUNT_A.id,
            outboundAccountId: ACCOUNT_A.outboundId,
            subject: `report ${i}`,
            createdAtMs: T0 + i,
          });
          return repo.insert(
            message,
            [queuedRecipient(`r-${id}`, id, { state: "done", status: "delivery", email: `user${i}@example.org`, domain: "example.org" })],
            [],
            { webhook: false },
          );
        }),
      );
    }
  } finally {
    store.close();
  }
}, 120_000);

afterAll(() => appliance?.stop());

const search = (query: string) =>
  fetch(
    `${appliance.http}/api/v0.1/${ACCOUNT_A.id}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=${encodeURIComponent(query)}&page=2`,
    {
      headers: { authorization: `Bearer ${ACCOUNT_A.token}` },
    },
  );

/** Milliseconds until the inbound SMTP server's 220 greeting. */
function greetingMs(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(appliance.inboundPort, "127.0.0.1");
    socket.once("data", (d: Buffer) => {
      socket.destroy();
      if (d.toString().startsWith("220")) resolve(performance.now() - started);
      else reject(new Error(`greeting: ${d}`));
    });
    socket.once("error", reject);
  });
}

async function healthzMs(): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${appliance.http}/healthz`);
  await res.arrayBuffer();
  return performance.now() - started;
}

describe("a slow search against the binary", () => {
  test("three at once: /healthz and an SMTP greeting answer within 500 ms meanwhile; each search stops at http.search_timeout with 503 saying so", async () => {
    // Each "org" matches every message, through its recipient (a subquery), and `query` is at most 500 characters.
    const slow = [...Array.from({ length: 59 }, () => "org"), "nothing-like-this"].join(" ");
    const started = performance.now();
    const answers = [1, 2, 3].map(() =>
      search(slow).then(async (res) => ({ res, body: await res.json(), ms: performance.now() - started })),
    );
    let done = false;
    const all = Promise.all(answers).finally(() => (done = true));
    const probes: { healthz: number; greeting: number }[] = [];
    while (!done) {
      probes.push({ healthz: await healthzMs(), greeting: await greetingMs() });
      await Bun.sleep(100);
    }
    const answered = await all;
    const slowest = (key: "healthz" | "greeting") => Math.round(Math.max(...probes.map((p) => p[key])));
    expect(slowest("healthz")).toBeLessThan(PROBE_BOUND_MS);
    expect(slowest("greeting")).toBeLessThan(PROBE_BOUND_MS);
    expect(probes.length).toBeGreaterThan(3);
    for (const { res, body, ms } of answered) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("2");
      expect(body).toEqual({
        status: 503,
        error: `search timed out: it took longer than ${TIMEOUT_MS} ms (http.search_timeout); narrow it with a field (from:, to:, subject:) or a created_at range, use fewer words, or try again later`,
      });
      expect(ms).toBeLessThan(TIMEOUT_MS + 1_000);
    }
  }, 60_000);

  test("a narrow search over the same 40,000 messages answers from the search thread", async () => {
    const res = await fetch(
      `${appliance.http}/api/v0.1/${ACCOUNT_A.id}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=${encodeURIComponent('subject:"report 39999"')}`,
      {
        headers: { authorization: `Bearer ${ACCOUNT_A.token}` },
      },
    );
    const body = (await res.json()) as { subject: string; recipients: { email: string }[] }[];
    expect({ status: res.status, body: res.status === 200 ? null : body }).toEqual({ status: 200, body: null });
    expect(body.map((m) => [m.subject, m.recipients[0]!.email])).toEqual([["report 39999", "user39999@example.org"]]);
    expect(res.headers.get("link")).toBeNull();
  }, 30_000);
});
