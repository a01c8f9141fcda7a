// Starts a whole appliance in-process on ephemeral ports in a temp dir, and calls its
// API through the same handler the HTTP listener uses.
import { App } from "../../src/app.ts";
import { parseConfigText } from "../../src/config/load.ts";
import type { Clock } from "../../src/lib/clock.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { silentLogger, type Logger } from "../../src/lib/logger.ts";
import type { BounceHandler } from "../../src/outbound/bounces/bounce-hook.ts";
import { TestDnsServer } from "./dns-server.ts";
import { testConfigToml, type TestConfigOptions } from "./fixtures.ts";
import { tempDir } from "./tmp.ts";

export interface TestApp {
  app: App;
  dataDir: string;
  /** Calls the API; `auth` is the Authorization header (none when null). */
  call(method: string, path: string, opts?: { body?: unknown; auth?: string | null; headers?: Record<string, string> }): Promise<Response>;
  /** call() and parse the JSON body. */
  json<T = any>(
    method: string,
    path: string,
    opts?: { body?: unknown; auth?: string | null },
  ): Promise<{ status: number; body: T; headers: Headers }>;
  stop(): Promise<void>;
}

export const bearer = (token: string) => `Bearer ${token}`;
export const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

export type TestAppOptions = Omit<TestConfigOptions, "dataDir"> & {
  clock?: Clock;
  logger?: Logger;
  dataDir?: string;
  bounces?: BounceHandler;
};

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const dir = opts.dataDir ? null : tempDir();
  const dataDir = opts.dataDir ?? dir!.path;
  // Without a zone of the test's own, an empty DNS server answers NXDOMAIN at once, so no
  // test waits on (or reaches) real DNS.
  const ownDns = opts.dnsServer ? null : await TestDnsServer.start();
  const dnsServer = opts.dnsServer ?? ownDns!.address;
  const parsed = parseConfigText(testConfigToml({ ...opts, dataDir, dnsServer }));
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  const resolver = createResolver({ servers: [dnsServer], timeoutMs: 300 });
  const app = await App.start({
    config: parsed.config,
    logger: opts.logger ?? silentLogger,
    clock: opts.clock,
    resolver,
    bounces: opts.bounces,
  });
  const call: TestApp["call"] = (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.auth) headers.authorization = o.auth;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    return app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  };
  return {
    app,
    dataDir,
    call,
    async json(method, path, o) {
      const res = await call(method, path, o);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
    },
    async stop() {
      await app.stop();
      await ownDns?.stop();
      dir?.remove();
    },
  };
}
