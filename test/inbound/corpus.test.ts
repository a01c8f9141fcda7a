// Corpus sweep of the inbound path: every message of test/corpus/mime/* and
// test/corpus/bounces goes through real SMTP to two addresses (json+n and
// multipart+n) of a running appliance, and each must be answered 250 (or refused by a
// documented limit, listed below) with a payload a real parser takes. Nothing hangs,
// nothing crashes, and the appliance is healthy afterwards.
//
// The corpus is stored unchanged in test/corpus/; see its README.md.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer, type SmtpResult } from "../helpers/smtp.ts";
import { TestTarget, type Received } from "../helpers/target.ts";
import { corpusPath } from "../helpers/corpus.ts";

const CORPUS_DIR = corpusPath();
const FOLDERS = ["mime/mailparser", "mime/postal-mime", "mime/enmime-good", "mime/enmime-broken", "bounces"] as const;

/** Longest one SMTP transaction may take before it counts as a hang. */
const SEND_TIMEOUT_MS = 20_000;
/**
 * Transactions in flight at once. Each message waits ~0.6 s on DNS (the test resolver
 * points at a closed port, so SPF ends in temperror after its timeouts), not on CPU.
 */
const CONCURRENCY = 8;

/**
 * Files the appliance refuses by its documented limits (header 256KB, MIME depth 20,
 * MIME parts 500, message 25MB), with the exact final SMTP reply. Only a genuine limit
 * belongs here; a 451 "could not be processed" is a bug, never an entry.
 */
const REFUSED_BY_LIMIT: Record<string, string> = {};

const SPF_RESULTS = ["none", "neutral", "pass", "fail", "softfail", "temperror", "permerror"];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

interface CorpusFile {
  /** "folder/name", the test's name and the key of REFUSED_BY_LIMIT. */
  key: string;
  path: string;
  /** Unique MAIL FROM of this file's transaction; finds its POSTs at the target. */
  sender: string;
}

function listFolder(folder: string): string[] {
  try {
    const dir = join(CORPUS_DIR, folder);
    return readdirSync(dir)
      .filter((name) => !/^(LICENSE|README)/i.test(name) && !name.startsWith(".") && statSync(join(dir, name)).isFile())
      .sort();
  } catch {
    return []; // a missing folder counts 0 and fails the enumeration test
  }
}

const perFolder = new Map(FOLDERS.map((f) => [f, listFolder(f)] as const));
const files: CorpusFile[] = FOLDERS.flatMap((folder) => perFolder.get(folder)!.map((name) => ({ folder, name }))).map(
  ({ folder, name }, i) => ({
    key: `${folder}/${name}`,
    path: join(CORPUS_DIR, folder, name),
    // Zero-padded and followed by "@", so no sender is a substring of another.
    sender: `corpus-${String(i).padStart(5, "0")}@sender.example.org`,
  }),
);

/** The bytes the server receives from nodemailer: every bare CR or LF as CRLF, ending in CRLF. */
function asSent(raw: Buffer): Buffer {
  const text = raw.toString("latin1").replace(/\r\n|\r|\n/g, "\r\n");
  return Buffer.from(text.endsWith("\r\n") ? text : text + "\r\n", "latin1");
}

type Outcome =
  | { kind: "sent"; smtp: SmtpResult; ms: number; md5: string }
  | { kind: "hang"; ms: number }
  | { kind: "error"; message: string };

let t: TestApp;
let target: TestTarget;
let jsonAddress = "";
let multipartAddress = "";
const outcomes = new Map<string, Promise<Outcome>>();

async function sendOne(file: CorpusFile): Promise<Outcome> {
  const raw = readFileSync(file.path);
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<"hang">((resolve) => (timer = setTimeout(() => resolve("hang"), SEND_TIMEOUT_MS)));
  try {
    const smtp = await Promise.race([
      sendWithNodemailer(t.app.inboundPort!, { raw, envelope: { from: file.sender, to: [jsonAddress, multipartAddress] } }),
      hang,
    ]);
    const ms = Math.round(performance.now() - started);
    if (smtp === "hang") return { kind: "hang", ms };
    return { kind: "sent", smtp, ms, md5: createHash("md5").update(asSent(raw)).digest("hex") };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the sweep in file order, CONCURRENCY at a time; each file's outcome is a promise its test awaits. */
function startSweep(): void {
  const settle = new Map<string, (o: Outcome) => void>();
  for (const f of files) outcomes.set(f.key, new Promise<Outcome>((resolve) => settle.set(f.key, resolve)));
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      const outcome = await sendOne(file).catch(
        (err: unknown): Outcome => ({ kind: "error", message: String((err as Error)?.stack ?? err) }),
      );
      settle.get(file.key)!(outcome);
    }
  };
  for (let i = 0; i < CONCURRENCY; i++) void worker();
}

/** The POSTs to `path` made for this file's transaction (its sender appears in the body). */
function postsFor(path: string, file: CorpusFile): Received[] {
  const needle = Buffer.from(file.sender);
  return target.at(path).filter((r) => Buffer.from(r.raw.buffer, r.raw.byteOffset, r.raw.byteLength).includes(needle));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Problems with the json+n POST; also returns its md5 and attachment sizes for the multipart check. */
function checkJson(file: CorpusFile, expectedMd5: string, problems: string[]): { md5?: string; sizes: number[] } {
  const posts = postsFor("/json", file);
  if (posts.length !== 1) {
    problems.push(`json+n: expected 1 POST, got ${posts.length}`);
    return { sizes: [] };
  }
  const post = posts[0]!;
  if (!post.contentType.startsWith("application/json")) problems.push(`json+n: content-type ${JSON.stringify(post.contentType)}`);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(post.raw));
  } catch (err) {
    problems.push(`json+n: body is not valid UTF-8 JSON: ${(err as Error).message}`);
    return { sizes: [] };
  }
  if (!isObject(body)) {
    problems.push("json+n: body is not an object");
    return { sizes: [] };
  }
  const env = body.envelope;
  let md5: string | undefined;
  if (!isObject(env)) problems.push("json+n: envelope is not an object");
  else {
    if (env.to !== jsonAddress) problems.push(`json+n: envelope.to ${JSON.stringify(env.to)}`);
    if (env.from !== file.sender) problems.push(`json+n: envelope.from ${JSON.stringify(env.from)}`);
    if (typeof env.md5 !== "string" || !/^[0-9a-f]{32}$/.test(env.md5)) problems.push(`json+n: envelope.md5 ${JSON.stringify(env.md5)}`);
    else {
      md5 = env.md5;
      if (md5 !== expectedMd5) problems.push(`json+n: envelope.md5 ${md5} is not the MD5 of the message as sent (${expectedMd5})`);
    }
    const spf = env.spf;
    if (!isObject(spf) || typeof spf.result !== "string" || !SPF_RESULTS.includes(spf.result))
      problems.push(`json+n: envelope.spf ${JSON.stringify(spf)}`);
  }
  if (!isObject(body.headers)) problems.push(`json+n: headers is not an object: ${JSON.stringify(body.headers)?.slice(0, 100)}`);
  const sizes: number[] = [];
  if (!Array.isArray(body.attachments)) problems.push("json+n: attachments is not an array");
  else {
    body.attachments.forEach((a: unknown, i) => {
      const at = `json+n: attachments[${i}]`;
      if (!isObject(a)) {
        problems.push(`${at} is not an object`);
        return;
      }
      if (typeof a.file_name !== "string" || a.file_name === "") problems.push(`${at}.file_name ${JSON.stringify(a.file_name)}`);
      if (typeof a.content_type !== "string" || a.content_type === "")
        problems.push(`${at}.content_type ${JSON.stringify(a.content_type)}`);
      // A decimal string, as the hosted service sends it (docs/compatibility.md).
      const size = typeof a.size === "string" && /^(0|[1-9][0-9]*)$/.test(a.size) ? Number(a.size) : -1;
      if (size < 0) problems.push(`${at}.size ${JSON.stringify(a.size)} is not a decimal string`);
      if (a.content_id !== null && (typeof a.content_id !== "string" || !/^<.+>$/.test(a.content_id)))
        problems.push(`${at}.content_id ${JSON.stringify(a.content_id)} is not null or <...>`);
      if (typeof a.content !== "string" || !BASE64.test(a.content)) problems.push(`${at}.content is not Base64`);
      else if (Buffer.from(a.content, "base64").length !== size)
        problems.push(`${at}: content decodes to ${Buffer.from(a.content, "base64").length} bytes, size says ${a.size}`);
      sizes.push(size);
    });
  }
  return { md5, sizes };
}

async function checkMultipart(file: CorpusFile, json: { md5?: string; sizes: number[] }, problems: string[]): Promise<void> {
  const posts = postsFor("/multipart", file);
  if (posts.length !== 1) return void problems.push(`multipart+n: expected 1 POST, got ${posts.length}`);
  const post = posts[0]!;
  if (!post.contentType.startsWith("multipart/form-data")) problems.push(`multipart+n: content-type ${JSON.stringify(post.contentType)}`);
  let form: Awaited<ReturnType<typeof TestTarget.formData>>;
  try {
    form = await TestTarget.formData(post);
  } catch (err) {
    return void problems.push(`multipart+n: body does not parse as multipart/form-data: ${(err as Error).message}`);
  }
  const field = (name: string) => {
    const v = form.get(name);
    return typeof v === "string" ? v : null;
  };
  if (field("envelope[to]") !== multipartAddress) problems.push(`multipart+n: envelope[to] ${JSON.stringify(field("envelope[to]"))}`);
  if (field("envelope[from]") !== file.sender) problems.push(`multipart+n: envelope[from] ${JSON.stringify(field("envelope[from]"))}`);
  const md5 = field("envelope[md5]");
  if (md5 === null || !/^[0-9a-f]{32}$/.test(md5)) problems.push(`multipart+n: envelope[md5] ${JSON.stringify(md5)}`);
  else if (json.md5 !== undefined && md5 !== json.md5) problems.push(`multipart+n: envelope[md5] ${md5} differs from json+n's ${json.md5}`);
  // The same attachments as json+n, as file parts of the same sizes.
  const parts = form.getAll("attachments[]");
  const partSizes = parts.map((p) => (typeof p === "string" ? -1 : p.size));
  if (JSON.stringify(partSizes) !== JSON.stringify(json.sizes))
    problems.push(`multipart+n: attachments[] sizes ${JSON.stringify(partSizes)}, json+n sizes ${JSON.stringify(json.sizes)}`);
}

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({ inbound: true });
  if (!t.app.inboundPort) throw new Error("the inbound listener did not start");
  const auth = bearer(ACCOUNT_A.token);
  const create = async (path: string, format: string) => {
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
      auth,
      body: { target: target.url(path), target_format: format },
    });
    if (res.status !== 201 || typeof res.body?.email !== "string")
      throw new Error(`creating the ${format} address: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.email as string;
  };
  jsonAddress = await create("/json", "json+n");
  multipartAddress = await create("/multipart", "multipart+n");
  startSweep();
});

afterAll(async () => {
  await Promise.allSettled(outcomes.values());
  await t?.stop();
  await target?.stop();
});

describe("inbound corpus sweep", () => {
  test.each([...FOLDERS])("%s is enumerated and not empty", (folder) => {
    const count = perFolder.get(folder)!.length;
    console.log(`corpus ${folder}: ${count} files`);
    expect(count).toBeGreaterThan(0);
  });

  test("the refusal table names only corpus files", () => {
    const keys = new Set(files.map((f) => f.key));
    expect(Object.keys(REFUSED_BY_LIMIT).filter((k) => !keys.has(k))).toEqual([]);
  });

  for (const file of files) {
    test(
      file.key,
      async () => {
        const outcome = await outcomes.get(file.key)!;
        if (outcome.kind === "error") throw new Error(`the SMTP client failed: ${outcome.message}`);
        if (outcome.kind === "hang") throw new Error(`no final SMTP reply within ${SEND_TIMEOUT_MS} ms (hang)`);
        const problems: string[] = [];
        const refusal = REFUSED_BY_LIMIT[file.key];
        if (refusal !== undefined) {
          if (outcome.smtp.response !== refusal)
            problems.push(`SMTP reply ${JSON.stringify(outcome.smtp.response)}, expected the limit refusal ${JSON.stringify(refusal)}`);
          if (postsFor("/json", file).length + postsFor("/multipart", file).length > 0)
            problems.push("a refused message was still posted to the target");
        } else {
          if (outcome.smtp.code !== 250) problems.push(`SMTP reply ${JSON.stringify(outcome.smtp.response)} (expected 250)`);
          const json = checkJson(file, outcome.md5, problems);
          await checkMultipart(file, json, problems);
        }
        expect(problems).toEqual([]);
      },
      SEND_TIMEOUT_MS + 10_000,
    );
  }

  test("the appliance is still healthy after the sweep", async () => {
    await Promise.allSettled(outcomes.values());
    const health = await t.json("GET", "/healthz");
    expect(health.status).toBe(200);
  });
});
