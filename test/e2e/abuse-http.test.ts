// Abuse of the HTTP API against the built binary, as an attacker would try it: bodies that
// nest half a million deep, three at once, and a request line with no Host. After each,
// another client's ordinary message is accepted within a second.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { ordinaryMessageAccepted, startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";

let appliance: BinaryAppliance;

beforeAll(async () => {
  appliance = await startBinaryAppliance({});
}, 60_000);

afterAll(() => appliance?.stop());

describe("HTTP abuse against the binary", () => {
  test("three 1 MB bodies nested 500,000 deep at once: each 422, and the next message is accepted within a second", async () => {
    const deep = "[".repeat(500_000) + "]".repeat(500_000);
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        fetch(`${appliance.http}/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
          body: deep,
        }),
      ),
    );
    for (const res of answers)
      expect(await res.json()).toEqual({ status: 422, error: "body nests arrays and objects more than 32 deep (http.max_json_depth)" });
    await ordinaryMessageAccepted(appliance, "after the nested JSON");
  }, 30_000);

  test("a request without Host gets JSON, never source lines, and the next message is accepted within a second", async () => {
    const port = Number(new URL(appliance.http).port);
    const answer = await new Promise<string>((resolve) => {
      let text = "";
      const socket = connect(port, "127.0.0.1", () => socket.write("GET /healthz HTTP/1.0\r\n\r\n"));
      socket.on("data", (d: Buffer) => (text += d.toString()));
      socket.on("end", () => resolve(text));
      setTimeout(() => (socket.destroy(), resolve(text)), 2000);
    });
    expect(answer).toStartWith("HTTP/1.1 400 ");
    expect(answer).not.toContain("src/");
    expect(answer).not.toContain("/tmp/");
    await ordinaryMessageAccepted(appliance, "after the request without Host");
  }, 30_000);
});
