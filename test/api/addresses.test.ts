// E1-E5 as a client sees them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { basic, bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const clock = new ManualClock(Date.parse("2026-11-22T10:00:00.000Z"));

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.stop());

const create = async (body: Record<string, unknown>) => {
  clock.advance(1000);
  const res = await t.json("POST", `${A}/addresses`, { auth, body });
  expect(res.status).toBe(201);
  return res.body;
};

describe("create (E2) and get (E3)", () => {
  test("201 with the record: 20-hex id, email at the inbound domain, timestamps with ms", async () => {
    const rec = await create({ target: "https://hooks.example.com/in", target_format: "json+n", nickname: "support" });
    expect(rec).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{20}$/),
      email: `${rec.id}@in.postroom.test`,
      target: "https://hooks.example.com/in",
      target_format: "json+n",
      nickname: "support",
      attachments: {},
      signed: false,
      store_messages: false,
      on_target_failure: "defer",
      spam_threshold: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: rec.created_at,
    });
    const got = await t.json("GET", `${A}/addresses/${rec.id}`, { auth });
    expect(got).toMatchObject({ status: 200, body: rec });
  });

  test("Basic auth with the account ID works like Bearer", async () => {
    const res = await t.json("GET", `${A}/addresses`, { auth: basic(ACCOUNT_A.id, ACCOUNT_A.token) });
    expect(res.status).toBe(200);
  });

  test("target credentials are kept but the password never shows", async () => {
    const rec = await create({ target: "https://bob:s3cret%21@hooks.example.com/in", target_format: "multipart+n" });
    expect(rec.target).toBe("https://bob:***@hooks.example.com/in");
    const listed = await t.json("GET", `${A}/addresses`, { auth });
    expect(JSON.stringify(listed.body)).not.toContain("s3cret");
  });

  test("attachment stores: local, and S3 with its secret masked", async () => {
    expect((await create({ target: "https://x.example/", target_format: "json+n", attachments: { store: "local" } })).attachments).toEqual({
      store: "local",
    });
    const s3 = await create({
      target: "https://x.example/",
      target_format: "json+n",
      attachments: { store: "s3", bucket: "mail-files", region: "eu-west-1", access_key_id: "AKIA1", secret_access_key: "topsecret" },
    });
    expect(s3.attachments).toEqual({
      store: "s3",
      bucket: "mail-files",
      region: "eu-west-1",
      access_key_id: "AKIA1",
      secret_access_key: "***",
    });
    const bad = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: "https://x.example/", target_format: "json+n", attachments: { store: "s3", bucket: "b-1" } },
    });
    expect(bad.body).toEqual({ status: 422, error: 'attachments.region: is required with store "s3"' });
  });
});

describe("update (E4)", () => {
  test("PUT replaces the whole record (nickname left out becomes null)", async () => {
    const rec = await create({ target: "https://a.example/", target_format: "json+n", nickname: "old" });
    clock.advance(5000);
    const res = await t.json("PUT", `${A}/addresses/${rec.id}`, {
      auth,
      body: { target: "https://b.example/", target_format: "multipart+n" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: rec.id,
      target: "https://b.example/",
      target_format: "multipart+n",
      nickname: null,
      created_at: rec.created_at,
    });
    expect(Date.parse(res.body.updated_at) - Date.parse(rec.updated_at)).toBe(5000);
  });

  test("PUT needs the required fields", async () => {
    const rec = await create({ target: "https://a.example/", target_format: "json+n" });
    const res = await t.json("PUT", `${A}/addresses/${rec.id}`, { auth, body: { nickname: "x" } });
    expect(res.body).toEqual({ status: 422, error: "target: is required; target_format: is required" });
  });

  test("PATCH changes only what it names", async () => {
    const rec = await create({ target: "https://bob:pw@a.example/", target_format: "json+n", nickname: "keep" });
    const res = await t.json("PATCH", `${A}/addresses/${rec.id}`, { auth, body: { target_format: "multipart+n" } });
    expect(res.body).toMatchObject({ target: "https://bob:***@a.example/", target_format: "multipart+n", nickname: "keep" });
    const cleared = await t.json("PATCH", `${A}/addresses/${rec.id}`, { auth, body: { nickname: null } });
    expect(cleared.body.nickname).toBeNull();
  });

  test("writing back the masked password keeps the real one; the mask alone on a new host is refused", async () => {
    const rec = await create({ target: "https://bob:pw@a.example/in", target_format: "json+n" });
    const put = await t.json("PUT", `${A}/addresses/${rec.id}`, { auth, body: { target: rec.target, target_format: "multipart+n" } });
    expect(put.status).toBe(200);
    const stored = t.app.store.db.query("SELECT target, target_password FROM addresses WHERE id = ?").get(rec.id) as {
      target: string;
      target_password: string;
    };
    expect(stored.target).toBe("https://bob@a.example/in");
    // Kept encrypted at rest; it is still the real one.
    expect(stored.target_password).toStartWith("v1:");
    expect(t.app.store.secrets.open(stored.target_password)).toBe("pw");
    const moved = await t.json("PATCH", `${A}/addresses/${rec.id}`, { auth, body: { target: "https://bob:***@b.example/in" } });
    expect(moved.body).toEqual({ status: 422, error: "target: the password *** is the mask shown on read; send the real password" });
  });
});

describe("delete (E5)", () => {
  test("202 with the record; then it is gone from every read", async () => {
    const rec = await create({ target: "https://a.example/", target_format: "json+n" });
    const del = await t.json("DELETE", `${A}/addresses/${rec.id}`, { auth });
    expect(del).toMatchObject({ status: 202, body: rec });
    expect((await t.json("GET", `${A}/addresses/${rec.id}`, { auth })).status).toBe(404);
    expect((await t.json("DELETE", `${A}/addresses/${rec.id}`, { auth })).status).toBe(404);
    expect((await t.json("PATCH", `${A}/addresses/${rec.id}`, { auth, body: { nickname: "x" } })).status).toBe(404);
    const list = await t.json("GET", `${A}/addresses?query=${rec.id}`, { auth });
    expect(list.body).toEqual([]);
  });
});

describe("list (E1)", () => {
  test("newest first, 50 a page, with a Link to the next page that stays right while records arrive", async () => {
    const fresh = await startTestApp({ clock });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        clock.advance(10);
        const res = await fresh.json("POST", `${A}/addresses`, {
          auth,
          body: { target: "https://a.example/", target_format: "json+n", nickname: `n${i}` },
        });
        ids.push(res.body.id);
      }
      const newestFirst = [...ids].reverse();
      const first = await fresh.json("GET", `${A}/addresses`, { auth });
      expect(first.body.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(0, 50));
      const link = first.headers.get("link")!;
      expect(link).toMatch(/^<\/api\/v0\.1\/a000000000000001\/addresses\?before=[A-Za-z0-9_-]+>; rel="next"$/);

      // A record created between the two pages does not shift the second page.
      clock.advance(10);
      await fresh.json("POST", `${A}/addresses`, { auth, body: { target: "https://a.example/", target_format: "json+n" } });
      const next = await fresh.json("GET", link.slice(1, link.indexOf(">")), { auth });
      expect(next.body.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(50));
      expect(next.headers.get("link")).toBeNull();

      const page2 = await fresh.json("GET", `${A}/addresses?page=2`, { auth });
      expect(page2.body).toHaveLength(11);
      expect(page2.headers.get("link")).toBeNull();
      const page1 = await fresh.json("GET", `${A}/addresses?page=1`, { auth });
      expect(page1.headers.get("link")).toBe(`</api/v0.1/${ACCOUNT_A.id}/addresses?page=2>; rel="next"`);
    } finally {
      await fresh.stop();
    }
  });

  test("query matches nickname, target or ID, ignoring case", async () => {
    await create({ target: "https://crm.example/hook", target_format: "json+n", nickname: "Sales Desk" });
    const res = await t.json("GET", `${A}/addresses?query=sales%20desk`, { auth });
    expect(res.body.map((a: { nickname: string }) => a.nickname)).toEqual(["Sales Desk"]);
    const byTarget = await t.json("GET", `${A}/addresses?query=CRM.EXAMPLE`, { auth });
    expect(byTarget.body).toHaveLength(1);
    const wildcard = await t.json("GET", `${A}/addresses?query=%25`, { auth });
    expect(wildcard.body).toEqual([]);
    const password = await t.json("GET", `${A}/addresses?query=s3cret`, { auth });
    expect(password.body).toEqual([]);
  });

  test("duplicate slashes in the path are collapsed (an official client sends them)", async () => {
    const res = await t.json("GET", `/api/v0.1//${ACCOUNT_A.id}//addresses`, { auth });
    expect(res.status).toBe(200);
  });
});

describe("(beyond) on_target_failure and spam_threshold", () => {
  test("set on create, kept by a PATCH that leaves them out, changed by one that names them", async () => {
    const rec = await create({
      target: "https://hooks.example.com/q",
      target_format: "json+n",
      on_target_failure: "queue",
      spam_threshold: 5,
    });
    expect(rec).toMatchObject({ on_target_failure: "queue", spam_threshold: 5 });
    const kept = await t.json("PATCH", `${A}/addresses/${rec.id}`, { auth, body: { nickname: "q" } });
    expect(kept.body).toMatchObject({ on_target_failure: "queue", spam_threshold: 5 });
    const changed = await t.json("PATCH", `${A}/addresses/${rec.id}`, { auth, body: { on_target_failure: "defer", spam_threshold: null } });
    expect(changed.body).toMatchObject({ on_target_failure: "defer", spam_threshold: null });
  });

  test("422 names the field for a mode that is not defer or queue, and a threshold that is not a number", async () => {
    const bad = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: "https://hooks.example.com/q", target_format: "json+n", on_target_failure: "retry" },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toContain("on_target_failure");
    const nan = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: "https://hooks.example.com/q", target_format: "json+n", spam_threshold: "high" },
    });
    expect(nan.status).toBe(422);
    expect(nan.body.error).toContain("spam_threshold");
  });
});
