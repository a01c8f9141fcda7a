// A reverse proxy on loopback, as nginx with $proxy_add_x_forwarded_for is: it appends the
// address it saw to X-Forwarded-For and passes the request on. With curl --interface
// (Bun's fetch cannot pick a source address), clients on 127.0.0.2, 127.0.0.3... reach it.

export interface ForwardingProxy {
  url: string;
  stop(): Promise<void>;
}

/** `port` 0: any free port. */
export function startForwardingProxy(upstream: string, port = 0): ForwardingProxy {
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(req, srv) {
      const url = new URL(req.url);
      const headers = new Headers(req.headers);
      const seen = srv.requestIP(req)!.address;
      const prior = headers.get("x-forwarded-for");
      headers.set("x-forwarded-for", prior ? `${prior}, ${seen}` : seen);
      const res = await fetch(upstream + url.pathname + url.search, { method: req.method, headers, body: await req.arrayBuffer() });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    },
  });
  return { url: `http://127.0.0.1:${proxy.port}`, stop: () => proxy.stop(true) };
}

/** A dashboard sign-in POST by curl from the loopback address `source`; its HTTP status. */
export async function signInFrom(source: string, url: string, token: string, headers: Record<string, string> = {}): Promise<number> {
  const args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", source, "-X", "POST", `${url}/dashboard/session`];
  for (const [k, v] of Object.entries({ "x-postroom-dashboard": "1", "content-type": "application/json", ...headers }))
    args.push("-H", `${k}: ${v}`);
  args.push("--data-binary", JSON.stringify({ token }));
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const [out, code] = [await new Response(proc.stdout).text(), await proc.exited];
  if (code !== 0) throw new Error(`curl exited ${code}: ${await new Response(proc.stderr).text()}`);
  return Number(out);
}
