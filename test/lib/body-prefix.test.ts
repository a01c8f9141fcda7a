// readBodyPrefix: a target's (or webhook receiver's) answer is kept up to a limit, read
// whole only when it announces a length within the limit, and never read past the limit
// otherwise: a long, chunked or compressed answer costs no more memory than the limit.
// Against a real HTTP server on loopback.
import { afterAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { readBodyPrefix } from "../../src/lib/egress-fetch.ts";

const LIMIT_BYTES = 1024;
const long = "x".repeat(1_000_000);

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    switch (new URL(req.url).pathname) {
      case "/short":
        return new Response("Mailbox is full", { headers: { "content-type": "text/plain" } });
      case "/long":
        return new Response(long);
      case "/chunked":
        return new Response(
          new ReadableStream({
            pull(c) {
              c.enqueue(new TextEncoder().encode("y".repeat(4096)));
            },
          }),
        );
      case "/gzip":
        // 1 KB on the wire, 1 MB once decompressed.
        return new Response(gzipSync(Buffer.from(long)), { headers: { "content-encoding": "gzip" } });
      default:
        return new Response("", { status: 204 });
    }
  },
});
afterAll(() => server.stop(true));

const read = async (path: string) => readBodyPrefix(await fetch(`http://127.0.0.1:${server.port}${path}`), LIMIT_BYTES);

describe("readBodyPrefix", () => {
  test("an answer within the limit is read whole", async () => {
    expect(await read("/short")).toBe("Mailbox is full");
  });

  test("no body: empty", async () => {
    expect(await read("/empty")).toBe("");
  });

  test("a long answer is cut at the limit", async () => {
    expect(await read("/long")).toBe("x".repeat(LIMIT_BYTES));
  });

  test("an endless chunked answer is cut at the limit, not waited for", async () => {
    expect(await read("/chunked")).toBe("y".repeat(LIMIT_BYTES));
  });

  test("a compressed answer announcing a small length is still cut at the limit once decompressed", async () => {
    expect(await read("/gzip")).toBe("x".repeat(LIMIT_BYTES));
  });
});
