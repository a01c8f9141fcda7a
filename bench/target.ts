// The HTTP target of the inbound benchmarks: one Bun.serve on loopback answering 200 at
// once, counting the POSTs (and their bytes) it gets per path, so each run can check that
// every message was posted exactly once, and keeping the last body to look into.

interface TargetCounter {
  posts: number;
  bytes: number;
  last: string;
}

export function startTarget() {
  const counters = new Map<string, TargetCounter>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      let c = counters.get(path);
      if (!c) counters.set(path, (c = { posts: 0, bytes: 0, last: "" }));
      const body = await req.text();
      if (req.method === "POST") c.posts++;
      c.bytes += body.length;
      c.last = body;
      return new Response("ok");
    },
  });
  const counter = (path: string): TargetCounter => {
    let c = counters.get(path);
    if (!c) counters.set(path, (c = { posts: 0, bytes: 0, last: "" }));
    return c;
  };
  return { server, url: (path: string) => `http://127.0.0.1:${server.port}${path}`, counter };
}
