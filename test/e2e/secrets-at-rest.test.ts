// Secrets are kept encrypted in postroom.db (issue 14, point 9): after an address is made
// with a Basic-auth target, an S3 attachment store and signing on, and a custom domain
// with a Basic-auth target of its own, no byte of the database files holds the password,
// the S3 secret key or the whsec_ secret; and everything still works with them: the target
// gets Basic auth, the S3 upload is accepted, the signature verifies.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import S3rver from "s3rver";
import { Webhook } from "standardwebhooks";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const PASSWORD = "target-pass-3c9e71";
const DOMAIN_PASSWORD = "domain-pass-8a2f40";
const S3_SECRET = "S3RVER";

let t: TestApp;
let target: TestTarget;
let s3: S3rver;
let s3Port: number;
const s3Dir = tempDir("postroom-s3rver-");

beforeAll(async () => {
  target = TestTarget.start();
  s3 = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory: s3Dir.path,
    configureBuckets: [{ name: "mail-files", configs: [] }],
  });
  s3Port = (await s3.run()).port;
  t = await startTestApp({ inbound: true, accounts: [{ ...ACCOUNT_A, extra: "domain_targets = true" }] });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await s3.close();
  s3Dir.remove();
});

/** Every byte of the database: the file, its WAL and its shared memory. */
function databaseBytes(): string {
  return ["postroom.db", "postroom.db-wal", "postroom.db-shm"]
    .map((f) => join(t.dataDir, f))
    .filter(existsSync)
    .map((p) => readFileSync(p).toString("latin1"))
    .join("");
}

test("the database holds no secret in clear; the target gets Basic auth, S3 takes the upload, the signature verifies", async () => {
  const created = await t.json("POST", `${A}/addresses`, {
    auth,
    body: {
      target: target.url("/secret", `hook:${PASSWORD}`),
      target_format: "json+n",
      signed: true,
      attachments: {
        store: "s3",
        bucket: "mail-files",
        region: "us-east-1",
        endpoint: `http://127.0.0.1:${s3Port}`,
        access_key_id: "S3RVER",
        secret_access_key: S3_SECRET,
      },
    },
  });
  expect(created.status).toBe(201);
  const signingSecret: string = created.body.signing_secret;
  expect(signingSecret).toStartWith("whsec_");
  const domain = await t.json("POST", `${A}/custom_domains?address_id=${created.body.id}`, {
    auth,
    body: { domain: "mail.customer.test", domain_target: target.url("/domain", `dom:${DOMAIN_PASSWORD}`) },
  });
  expect(domain.status).toBe(201);

  // S3RVER is s3rver's fixed key: it is also a column name nowhere, so it cannot match by chance.
  const bytes = databaseBytes();
  const inClear = [
    PASSWORD,
    DOMAIN_PASSWORD,
    `"secret_access_key":"${S3_SECRET}"`,
    signingSecret,
    signingSecret.slice("whsec_".length),
  ].filter((s) => bytes.includes(s));
  expect(inClear).toEqual([]);
  expect((statSync(join(t.dataDir, "postroom.db")).mode & 0o777).toString(8)).toBe("600");

  // Reads still mask them, and the API works with the real ones.
  const read = await t.json("GET", `${A}/addresses/${created.body.id}`, { auth });
  expect(read.body).toMatchObject({ target: target.url("/secret", "hook:***"), attachments: { secret_access_key: "***" }, signed: true });
  const result = await sendWithNodemailer(t.app.inboundPort!, {
    from: "alice@sender.test",
    to: created.body.email,
    subject: "secrets",
    text: "see attached",
    attachments: [{ filename: "a.txt", content: "attached", contentType: "text/plain" }],
  });
  expect(result.response).toBe("250 2.0.0 Accepted");
  const [post] = target.at("/secret");
  expect(post!.headers.authorization).toBe(`Basic ${Buffer.from(`hook:${PASSWORD}`).toString("base64")}`);
  expect(new Webhook(signingSecret).verify(Buffer.from(post!.raw), post!.headers)).toBeDefined();
  const [attachment] = post!.json.attachments;
  expect(await (await fetch(attachment.url)).text()).toBe("attached");
});
