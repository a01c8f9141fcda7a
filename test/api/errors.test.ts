// Every row of the error table (docs/api.md, Errors), on the routes that exist.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { forbidden, NO_SUCH_PATH, unauthorized } from "../../src/http/refusals.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const validAddress = { target: "https://hooks.example.com/in", target_format: "json+n" };
const s3Store = { store: "s3", bucket: "mail-files", region: "us-east-1", access_key_id: "AK", secret_access_key: "SK" };

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.stop());

describe("401 Unauthorized", () => {
  test.each([
    ["no Authorization header", null],
    ["a wrong token", bearer("pr_wrong")],
    ["an unknown scheme", "Token pr_token_account_a"],
    ["Basic with a wrong password", `Basic ${Buffer.from(`${ACCOUNT_A.id}:nope`).toString("base64")}`],
  ])("%s", async (_name, auth) => {
    const res = await t.json("GET", `${A}/addresses`, { auth });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: 401, error: unauthorized("bearerAPIToken") });
    expect(res.body.error).toStartWith("Unauthorized: send an API token of the account in the path (accounts.api_tokens");
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
  });

  test("is answered before the body is read or validated", async () => {
    const res = await t.json("POST", `${A}/addresses`, { auth: null, body: "{not json" });
    expect(res.status).toBe(401);
  });
});

describe("403 Forbidden", () => {
  test("a valid token on another account's path", async () => {
    const res = await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/addresses`, { auth: bearer(ACCOUNT_A.token) });
    expect(res).toMatchObject({
      status: 403,
      body: {
        status: 403,
        error: "Forbidden: this token is another account's; use an API token of the account in the path (accounts.api_tokens)",
      },
    });
  });
  test("a sending key on a management route", async () => {
    const res = await t.json("GET", `${A}/addresses`, { auth: bearer(ACCOUNT_A.smtpKey) });
    expect(res).toMatchObject({ status: 403, body: { status: 403, error: forbidden("send_key_on_management") } });
    expect(res.body.error).toStartWith("Forbidden: an outbound account's key only sends (POST /api/v0.1/{outboundAccountID}/messages)");
  });
  test("E11 with the account's API token names the outbound account's key", async () => {
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.token),
      body: { from: "ann@sender.test", to: "x@example.org", plain: "x" },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe(
      "Forbidden: sends take the outbound account's key (accounts.outbound.api_keys, as Authorization: Bearer <key>, the smtpAuth scheme), " +
        "not an account API token; the path names the outbound account's id (accounts.outbound.id)",
    );
  });
});

describe("404 Not Found", () => {
  const noAddress = (id: string) => `Not Found: no address "${id}" in this account; GET ${A}/addresses lists them`;
  test.each([
    ["an unknown address", "GET", `${A}/addresses/00000000000000000000`, noAddress("00000000000000000000")],
    ["a malformed address ID", "GET", `${A}/addresses/zzz`, noAddress("zzz")],
    ["an unknown route under the account", "GET", `${A}/no_such_thing`, NO_SUCH_PATH],
    ["an unknown method on a route", "POST", `${A}/addresses/00000000000000000000`, NO_SUCH_PATH],
    [
      "custom domains of an unknown address",
      "GET",
      `${A}/custom_domains?address_id=00000000000000000000`,
      noAddress("00000000000000000000"),
    ],
    [
      "an unknown sending domain",
      "GET",
      `${A}/sending_domains/nope`,
      `Not Found: no sending domain "nope" in this account; GET ${A}/sending_domains lists them`,
    ],
  ])("%s", async (_name, method, path, error) => {
    const res = await t.json(method, path, { auth: bearer(ACCOUNT_A.token) });
    expect(res).toMatchObject({ status: 404, body: { status: 404, error } });
  });
  test("a route outside the API", async () => {
    const res = await t.json("GET", "/nothing/here");
    expect(res).toMatchObject({ status: 404, body: { status: 404, error: NO_SUCH_PATH } });
    expect(NO_SUCH_PATH).toStartWith("Not Found: no such path or method; the operations are listed in GET /api/v0.1/openapi.json");
  });
});

describe("413 Payload Too Large", () => {
  const TOO_LARGE =
    "Payload Too Large: the body is over 1048576 bytes, the limit http.max_body_size sets; send less or raise http.max_body_size";
  const big = JSON.stringify({ ...validAddress, nickname: "x".repeat(2 * 1024 * 1024) });
  test("a declared Content-Length over http.max_body_size", async () => {
    const res = await t.json("POST", `${A}/addresses`, { auth: bearer(ACCOUNT_A.token), body: big });
    expect(res).toMatchObject({ status: 413, body: { status: 413, error: TOO_LARGE } });
  });
  test("a chunked body that grows past the limit", async () => {
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.subarray(i, i + 64 * 1024));
        c.close();
      },
    });
    const res = await t.app.handle(
      new Request(`http://localhost${A}/addresses`, {
        method: "POST",
        headers: { authorization: bearer(ACCOUNT_A.token), "content-type": "application/json" },
        body: stream,
      }),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ status: 413, error: TOO_LARGE });
  });
});

describe("422 validation", () => {
  test.each([
    ["malformed JSON", '{"target": ', "body is not valid JSON"],
    ["a body that is not an object", "[1,2]", "body must be a JSON object"],
    ["an empty body", "", "body must be a JSON object"],
    ["an unknown field", { ...validAddress, colour: "red" }, "colour: unknown field"],
    ["a missing field", { target: "https://x.example/" }, "target_format: is required"],
    [
      "a wrong enum",
      { ...validAddress, target_format: "xml" },
      'target_format: must be one of "json+n", "multipart+n", "json", "multipart", "raw", "rfc822"',
    ],
    [
      "a wrong type",
      { ...validAddress, nickname: 5 },
      "nickname: must be one line of at most 255 characters without control characters, or null",
    ],
    ["a nickname holding NUL", { ...validAddress, nickname: "a\u0000b" }, "nickname: must not contain control characters"],
    [
      "a nickname holding CR/LF",
      { ...validAddress, nickname: "a\r\nX-Injected: 1" },
      "nickname: must be one line of at most 255 characters without control characters, or null",
    ],
    [
      "a nickname holding half a surrogate pair",
      { ...validAddress, nickname: "a\ud800b" },
      "nickname: is not well-formed Unicode (it holds half of a surrogate pair)",
    ],
    [
      "a target holding a line break (URL parsing would drop it silently)",
      { ...validAddress, target: "https://x.example/\nin" },
      "target: must be one line of at most 2048 characters, without control characters",
    ],
    [
      "a nested field holding an escape sequence",
      { ...validAddress, attachments: { store: "s3", bucket: "b\u001b[31m" } },
      "attachments.bucket: must not contain control characters",
    ],
    ["a key holding a control character", { ...validAddress, ["x\u0007"]: 1 }, "body: a key must not contain control characters"],
    ["a bad target", { ...validAddress, target: "ftp://x.example/" }, "target: must be an http or https URL"],
    [
      "a loopback target (not allowed by this config)",
      { ...validAddress, target: "http://127.0.0.1:8080/in" },
      "target: points at a private, loopback or link-local address (127.0.0.1); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    ],
    [
      "a metadata target",
      { ...validAddress, target: "http://169.254.169.254/latest" },
      "target: points at a cloud metadata address (169.254.169.254)",
    ],
    ["a bad attachment store", { ...validAddress, attachments: { store: "dropbox" } }, 'attachments.store: must be "local" or "s3"'],
    [
      "an S3 endpoint on loopback (not allowed by this config)",
      { ...validAddress, attachments: { ...s3Store, endpoint: "http://127.0.0.1:9000" } },
      "attachments.endpoint: points at a private, loopback or link-local address (127.0.0.1); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    ],
    [
      "an S3 endpoint on a private address as IPv4-compatible IPv6",
      { ...validAddress, attachments: { ...s3Store, endpoint: "http://[::10.0.0.1]:9000" } },
      "attachments.endpoint: points at a private, loopback or link-local address (::a00:1); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    ],
    [
      "an S3 endpoint on the metadata address",
      { ...validAddress, attachments: { ...s3Store, endpoint: "http://169.254.169.254" } },
      "attachments.endpoint: points at a cloud metadata address (169.254.169.254)",
    ],
  ])("%s", async (_name, body, error) => {
    const res = await t.json("POST", `${A}/addresses`, { auth: bearer(ACCOUNT_A.token), body });
    expect(res).toEqual({ status: 422, body: { status: 422, error }, headers: res.headers });
  });
  test("E4: a PUT or PATCH that points the S3 endpoint at a refused address", async () => {
    const created = await t.json("POST", `${A}/addresses`, {
      auth: bearer(ACCOUNT_A.token),
      body: { ...validAddress, attachments: { ...s3Store, endpoint: "https://s3.example.com" } },
    });
    expect(created.status).toBe(201);
    const path = `${A}/addresses/${created.body.id}`;
    const put = await t.json("PUT", path, {
      auth: bearer(ACCOUNT_A.token),
      body: { ...validAddress, attachments: { ...s3Store, endpoint: "http://192.168.1.20:9000" } },
    });
    expect(put.body).toEqual({
      status: 422,
      error:
        "attachments.endpoint: points at a private, loopback or link-local address (192.168.1.20); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    });
    const patch = await t.json("PATCH", path, {
      auth: bearer(ACCOUNT_A.token),
      body: { attachments: { ...s3Store, endpoint: "http://[fd00:ec2::254]/" } },
    });
    expect(patch.body).toEqual({ status: 422, error: "attachments.endpoint: points at a cloud metadata address (fd00:ec2::254)" });
  });
  test("a bad query parameter", async () => {
    const res = await t.json("GET", `${A}/addresses?page=0`, { auth: bearer(ACCOUNT_A.token) });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("query page: must be a whole number from 1");
  });
  test("a cursor we did not issue", async () => {
    const res = await t.json("GET", `${A}/addresses?before=garbage`, { auth: bearer(ACCOUNT_A.token) });
    expect(res.body).toEqual({
      status: 422,
      error: 'before: is not a cursor this server issued; follow the Link header\'s rel="next" URL as it is',
    });
  });
  test("a missing required query parameter", async () => {
    const res = await t.json("GET", `${A}/custom_domains`, { auth: bearer(ACCOUNT_A.token) });
    expect(res.body).toEqual({ status: 422, error: "query address_id: is required" });
  });
});

describe("500 Internal Server Error", () => {
  test("a failure inside a route answers the generic message and logs the details", async () => {
    const lines: string[] = [];
    const broken = await startTestApp({ logger: createLogger({ sink: (l) => lines.push(l) }) });
    try {
      broken.app.store.db.exec("ALTER TABLE addresses RENAME TO addresses_gone");
      const res = await broken.json("GET", `${A}/addresses`, { auth: bearer(ACCOUNT_A.token) });
      expect(res.body).toEqual({ status: 500, error: "Internal Server Error" });
      expect(lines.some((l) => l.includes("unhandled error") && l.includes("no such table: addresses"))).toBe(true);
    } finally {
      await broken.stop();
    }
  });
});

describe("507 Insufficient Storage", () => {
  test("a database that cannot grow (SQLITE_FULL): writes answer 507 and 'disk full' is logged once; reads work; freed, writes work again", async () => {
    const lines: { msg: string; where?: string; code?: string }[] = [];
    const full = await startTestApp({ logger: createLogger({ sink: (l) => lines.push(JSON.parse(l)) }) });
    const create = () =>
      full.json("POST", `${A}/addresses`, { auth: bearer(ACCOUNT_A.token), body: { ...validAddress, nickname: "n".repeat(200) } });
    try {
      // SQLite refuses to grow the file past max_page_count, as it would a full disk.
      const { db } = full.app.store;
      const { page_count } = db.query("PRAGMA page_count").get() as { page_count: number };
      db.exec(`PRAGMA max_page_count = ${page_count}`);
      const statuses: number[] = [];
      while (statuses.length < 300 && statuses.at(-1) !== 507) statuses.push((await create()).status);
      expect(statuses.at(-1)).toBe(507);
      expect(statuses.filter((s) => s !== 201 && s !== 507)).toEqual([]);
      for (let i = 0; i < 20; i++) expect((await create()).body).toEqual({ status: 507, error: "Insufficient Storage" });
      expect((await full.json("GET", `${A}/addresses`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(200);
      expect(lines.filter((l) => l.msg === "disk full").map((l) => [l.where, l.code])).toEqual([["api", "SQLITE_FULL"]]);
      expect(lines.filter((l) => l.msg.startsWith("unhandled error"))).toEqual([]);

      db.exec("PRAGMA max_page_count = 1073741823");
      expect((await create()).status).toBe(201);
    } finally {
      await full.stop();
    }
  });
});
