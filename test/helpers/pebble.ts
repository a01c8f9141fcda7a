// Debian's pebble, Let's Encrypt's test ACME server, started on loopback for one test
// file: its own HTTPS certificate from a throwaway CA (made with openssl), free ports,
// and HTTP-01 validation sent to the port the appliance answers challenges on, with
// names resolved by the test's DNS server.
import { createServer } from "node:net";
import { join } from "node:path";
import { makeTestCa } from "./certs.ts";
import { tempDir } from "./tmp.ts";

export interface Pebble {
  directoryUrl: string;
  /** CA of pebble's own HTTPS listener (tls.acme.ca_file). */
  caFile: string;
  /** Where pebble sends HTTP-01 validation requests (tls.acme.challenge_listen's port). */
  challengePort: number;
  /** The root that issues certificates (regenerated at every start), PEM. */
  issuingRoot(): Promise<string>;
  /** What pebble logged so far (orders, validations), for a failing test's message. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** Whether pebble is installed; CI installs it, and there a missing pebble is a failure. */
export function pebbleAvailable(): boolean {
  const found = Bun.which("pebble") !== null;
  if (!found && process.env.CI === "true") throw new Error("pebble is required in CI (.ci/run installs it)");
  return found;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startPebble(dnsServer: string): Promise<Pebble> {
  const dir = tempDir();
  const ca = makeTestCa(dir.path, "postroom test pebble listener CA");
  const { certFile, keyFile } = ca.issue("listener", "IP:127.0.0.1,DNS:localhost");
  const caFile = ca.certFile;
  const [apiPort, managementPort, challengePort, tlsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const configFile = join(dir.path, "pebble.json");
  await Bun.write(
    configFile,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${apiPort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: certFile,
        privateKey: keyFile,
        httpPort: challengePort,
        tlsPort,
        ocspResponderURL: "",
        externalAccountBindingRequired: false,
      },
    }),
  );
  const logFile = join(dir.path, "pebble.log");
  const proc = Bun.spawn(["pebble", "-config", configFile, "-dnsserver", dnsServer], {
    // No artificial validation delays; no random nonce rejections (acme-client retries
    // badNonce, but the test should not depend on it); every order validated anew.
    env: { ...process.env, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0", PEBBLE_AUTHZREUSE: "0" },
    stdout: Bun.file(logFile),
    stderr: Bun.file(logFile),
  });
  const caPem = await Bun.file(caFile).text();
  const directoryUrl = `https://127.0.0.1:${apiPort}/dir`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if ((await fetch(directoryUrl, { tls: { ca: caPem } })).ok) break;
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill();
      throw new Error(`pebble did not start: ${await Bun.file(logFile).text()}`);
    }
    await Bun.sleep(50);
  }
  return {
    directoryUrl,
    caFile,
    challengePort,
    issuingRoot: async () => (await fetch(`https://127.0.0.1:${managementPort}/roots/0`, { tls: { ca: caPem } })).text(),
    log: () => Bun.file(logFile).text(),
    async stop() {
      proc.kill();
      await proc.exited;
      dir.remove();
    },
  };
}
