// What reaches the HTTP listener's socket, however malformed, gets {status, error} JSON:
// never Bun's development error page, never an empty body.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { NO_SUCH_PATH } from "../../src/http/refusals.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.stop());

/** Writes raw bytes to the listener and returns everything it answers until it closes (or 2 s). */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    const timer = setTimeout(() => (socket.destroy(), resolve(answer)), 2000);
    socket.on("data", (d) => (answer += d.toString("latin1")));
    socket.on("end", () => (clearTimeout(timer), resolve(answer)));
    socket.on("error", (e) => (clearTimeout(timer), reject(e)));
  });
}

const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

describe("malformed requests get JSON errors", () => {
  test("HTTP/1.0 without Host: 400 {status, error}, no development error page", async () => {
    const answer = await rawExchange(t.app.httpPort!, "GET /healthz HTTP/1.0\r\n\r\n");
    expect(answer).toStartWith("HTTP/1.1 400 ");
    expect(answer.toLowerCase()).toContain("content-type: application/json");
    expect(bodyOf(answer)).toEqual({ status: 400, error: "the request needs a Host header and a path starting with /" });
    expect(answer).not.toContain("<!doctype html>");
  });

  test("CONNECT: 404 {status, error}", async () => {
    const answer = await rawExchange(
      t.app.httpPort!,
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n",
    );
    expect(answer).toStartWith("HTTP/1.1 404 ");
    expect(bodyOf(answer)).toEqual({ status: 404, error: NO_SUCH_PATH });
  });

  test("a declared length far past every limit: 413 {status, error}, not Bun's empty 413", async () => {
    // 15 MB declared on E11 (its cap is outbound.max_size plus Base64 overhead); the body never comes.
    const answer = await rawExchange(
      t.app.httpPort!,
      `POST /api/v0.1/${ACCOUNT_A.outboundId}/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ACCOUNT_A.smtpKey}\r\nContent-Type: application/json\r\nContent-Length: 15000000\r\nConnection: close\r\n\r\n{`,
    );
    expect(answer).toStartWith("HTTP/1.1 413 ");
    expect(bodyOf(answer).error).toStartWith("Payload Too Large: the body is over ");
    expect(bodyOf(answer).error).toEndWith(" bytes, the limit outbound.max_size sets; send less or raise outbound.max_size");
  });
});

describe("deeply nested JSON", () => {
  test("a 1 MB body nesting 500,000 deep is refused with 422 in milliseconds, and /healthz answers meanwhile", async () => {
    const body = "[".repeat(500_000) + "]".repeat(500_000);
    const started = performance.now();
    const [res, health] = await Promise.all([
      fetch(`http://127.0.0.1:${t.app.httpPort}/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
        body,
      }),
      fetch(`http://127.0.0.1:${t.app.httpPort}/healthz`),
    ]);
    const elapsedMs = performance.now() - started;
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ status: 422, error: "body nests arrays and objects more than 32 deep (http.max_json_depth)" });
    expect(health.status).toBe(200);
    // Not a timing target: a bound far above the few ms it takes, far below the 6 s it took.
    expect(elapsedMs).toBeLessThan(1000);
  });

  test("nesting at the limit is parsed and judged by the schema as usual", async () => {
    let nested: unknown = "x";
    for (let i = 0; i < 30; i++) nested = [nested];
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
      auth: `Bearer ${ACCOUNT_A.token}`,
      body: { target: "https://hooks.example.com/in", target_format: "json+n", nickname: nested },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toStartWith("nickname: must be");
  });
});
