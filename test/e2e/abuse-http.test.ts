// Abuse of the HTTP API against the built binary, as an attacker would try it: bodies that
// nest half a million deep, three at once, and a request line with no Host. After each,
// another client's ordinary message is accepted within a second.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import { builtBinary } from "../helpers/binary.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
let server: ServeProcess;
let target: TestTarget;
let http = "";
let inboundPort = 0;
let email = "";

beforeAll(async () => {
  const [httpPort, smtpPort] = [await freePort(), await freePort()];
  inboundPort = smtpPort;
  http = `http://127.0.0.1:${httpPort}`;
  target = TestTarget.start();
  const configPath = join(dir.path, "postroom.toml");
  await Bun.write(
    configPath,
    testConfigToml({ dataDir: join(dir.path, "data"), inbound: true })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${httpPort}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtpPort}"`)
      .replace('level = "warn"', 'level = "info"'),
  );
  server = ServeProcess.run([builtBinary(), "serve", "--config", configPath], dir.path);
  await server.httpPort();
  const created = await fetch(`${http}/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT_A.token}`, "content-type": "application/json" },
    body: JSON.stringify({ target: target.url("/in"), target_format: "json+n" }),
  });
  email = ((await created.json()) as { email: string }).email;
}, 60_000);

afterAll(async () => {
  server?.signal("SIGTERM");
  await server?.exited();
  await target?.stop();
  dir.remove();
});

/** Another client's ordinary message: the SMTP reply comes within a second and the target gets it. */
async function ordinaryMessageAccepted(subject: string): Promise<void> {
  const started = performance.now();
  const sent = await sendWithNodemailer(inboundPort, { from: "bob@sender.test", to: email, subject, text: "an ordinary message" });
  expect(sent.response).toStartWith("250");
  expect(performance.now() - started).toBeLessThan(1000);
  expect(target.at("/in").some((m) => m.json.headers.subject === subject)).toBe(true);
}

describe("HTTP abuse against the binary", () => {
  test("three 1 MB bodies nested 500,000 deep at once: each 422, and the next message is accepted within a second", async () => {
    const deep = "[".repeat(500_000) + "]".repeat(500_000);
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        fetch(`${http}/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { method: "POST", headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" }, body: deep }),
      ),
    );
    for (const res of answers) expect(await res.json()).toEqual({ status: 422, error: "body nests arrays and objects more than 32 deep" });
    await ordinaryMessageAccepted("after the nested JSON");
  }, 30_000);

  test("a request without Host gets JSON, never source lines, and the next message is accepted within a second", async () => {
    const port = Number(new URL(http).port);
    const answer = await new Promise<string>((resolve) => {
      let text = "";
      const socket = connect(port, "127.0.0.1", () => socket.write("GET /healthz HTTP/1.0\r\n\r\n"));
      socket.on("data", (d: Buffer) => (text += d.toString()));
      socket.on("end", () => resolve(text));
      setTimeout(() => (socket.destroy(), resolve(text)), 2000);
    });
    expect(answer).toStartWith("HTTP/1.1 400 ");
    expect(answer).not.toContain("src/");
    expect(answer).not.toContain(dir.path);
    await ordinaryMessageAccepted("after the request without Host");
  }, 30_000);
});
