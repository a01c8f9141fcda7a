// HTTP-01 answers come from the store: a token written through one handle of the store (the
// node whose order the CA validates) is answered over HTTP by a responder on another handle
// of the same database (the node the CA's request reached), and is gone there once deleted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openStore, type Store } from "../../src/store/store.ts";
import { listenForChallenges } from "../../src/tls/challenge-listener.ts";
import { ChallengeResponder } from "../../src/tls/challenges.ts";
import { sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
let ordering: Store;
let answering: Store;
let server: ReturnType<typeof Bun.serve>;
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

beforeAll(() => {
  ordering = openStore(dir.path);
  answering = openStore(dir.path);
  const responder = new ChallengeResponder(sqliteTlsStore(answering, Date.now));
  server = listenForChallenges({ host: "127.0.0.1", port: 0 }, responder, () => "https://mail.postroom.test");
});

afterAll(async () => {
  await server.stop(true);
  ordering.close();
  answering.close();
  dir.remove();
});

describe("ChallengeResponder on a shared store", () => {
  test("a token written through another handle is answered; deleted there, it is a 404 here", async () => {
    const writer = new ChallengeResponder(sqliteTlsStore(ordering, Date.now));
    await writer.set("tok_Abc-123", "tok_Abc-123.thumbprint");
    const res = await fetch(url("/.well-known/acme-challenge/tok_Abc-123"), { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("tok_Abc-123.thumbprint");
    await writer.delete("tok_Abc-123");
    const gone = await fetch(url("/.well-known/acme-challenge/tok_Abc-123"), { redirect: "manual" });
    expect(gone.status).toBe(404);
  });

  test("a path that is not a challenge is not looked up: the redirect to HTTPS", async () => {
    const res = await fetch(url("/v1/health?x=1"), { redirect: "manual" });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe("https://mail.postroom.test/v1/health?x=1");
  });
});
