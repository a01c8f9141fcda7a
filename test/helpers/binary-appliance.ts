// The built binary serving a test config on fixed free ports (as a VPS runs it: port 0 hid
// a listener started twice), with one address of account A posting to a real HTTP target.
// For tests that attack or load the process users run.
import { expect } from "bun:test";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { builtBinary } from "./binary.ts";
import { ACCOUNT_A, testConfigToml, type TestConfigOptions } from "./fixtures.ts";
import { freePort } from "./pebble.ts";
import { ServeProcess } from "./process.ts";
import { TestTarget } from "./target.ts";
import { tempDir } from "./tmp.ts";

export interface BinaryAppliance {
  server: ServeProcess;
  target: TestTarget;
  http: string;
  inboundPort: number;
  submissionPort: number;
  /** The address whose mail goes to target.url("/in"). */
  email: string;
  /** The server's data_dir (a test may fill its SQLite store while it runs). */
  dataDir: string;
  stop(): Promise<void>;
}

/** Inbound always on; submission on when `opts.submission`; log level info. */
export async function startBinaryAppliance(opts: Omit<TestConfigOptions, "dataDir" | "inbound">): Promise<BinaryAppliance> {
  const dir = tempDir();
  const [httpPort, inboundPort, submissionPort] = [await freePort(), await freePort(), await freePort()];
  const target = TestTarget.start();
  const configPath = join(dir.path, "postroom.toml");
  await Bun.write(
    configPath,
    testConfigToml({ ...opts, dataDir: join(dir.path, "data"), inbound: true })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${httpPort}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${inboundPort}"`)
      .replace('submission_listen = "127.0.0.1:0"', `submission_listen = "127.0.0.1:${submissionPort}"`)
      .replace('level = "warn"', 'level = "info"'),
  );
  const server = ServeProcess.run([builtBinary(), "serve", "--config", configPath], dir.path);
  const http = `http://127.0.0.1:${await server.httpPort()}`;
  await server.waitFor((l) => l.msg === "postroom started");
  const created = await fetch(`${http}/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT_A.token}`, "content-type": "application/json" },
    body: JSON.stringify({ target: target.url("/in"), target_format: "json+n" }),
  });
  const email = ((await created.json()) as { email: string }).email;
  return {
    server,
    target,
    http,
    inboundPort,
    submissionPort,
    email,
    dataDir: join(dir.path, "data"),
    async stop() {
      server.signal("SIGTERM");
      await server.exited();
      await target.stop();
      dir.remove();
    },
  };
}

/** Another client's (127.0.0.2) ordinary message: the SMTP reply comes within a second and the target gets it. */
export async function ordinaryMessageAccepted(appliance: BinaryAppliance, subject: string): Promise<void> {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1",
    port: appliance.inboundPort,
    localAddress: "127.0.0.2",
    secure: false,
    ignoreTLS: true,
    name: "client.example.org",
  });
  try {
    const started = performance.now();
    const info = await transport.sendMail({ from: "bob@sender.test", to: appliance.email, subject, text: "an ordinary message" });
    expect(info.response).toStartWith("250");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(appliance.target.at("/in").some((m) => m.json.headers.subject === subject)).toBe(true);
  } finally {
    transport.close();
  }
}
