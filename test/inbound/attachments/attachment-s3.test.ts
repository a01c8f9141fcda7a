// S3 uploads: SigV4 signing (AWS's published examples, and the values botocore computes),
// and uploads to a real S3 server (s3rver) that go to the address the egress guard
// checked through [dns], never to one the system resolver would give.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import S3rver from "s3rver";
import type { AttachmentStore } from "../../../src/inbound/addresses/attachment-store.ts";
import { s3ObjectUrl, uploadToS3 } from "../../../src/inbound/attachments/attachment-s3.ts";
import { presignedUrl, sha256Hex, signedHeaders } from "../../../src/inbound/attachments/s3-sigv4.ts";
import { createResolver } from "../../../src/lib/dns.ts";
import { EgressRefused } from "../../../src/lib/egress.ts";
import { TestDnsServer } from "../../helpers/dns-server.ts";
import { tempDir } from "../../helpers/tmp.ts";

describe("SigV4", () => {
  // https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html and
  // sigv4-query-string-auth.html: examplebucket, 24 May 2013.
  const aws = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1" };
  const at = Date.parse("2013-05-24T00:00:00Z");
  const signatureOf = (h: Record<string, string>) => /Signature=([0-9a-f]{64})$/.exec(h.authorization!)![1];

  test("AWS's PUT object example", () => {
    const body = "Welcome to Amazon S3.";
    expect(sha256Hex(body)).toBe("44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    const headers = signedHeaders(
      {
        method: "PUT",
        url: new URL("https://examplebucket.s3.amazonaws.com/test%24file.text"),
        headers: { Date: "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY" },
        payloadHash: sha256Hex(body),
        nowMs: at,
      },
      aws,
    );
    expect(headers.authorization).toStartWith(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,",
    );
    expect(signatureOf(headers)).toBe("98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    expect(headers).toMatchObject({ host: "examplebucket.s3.amazonaws.com", "x-amz-date": "20130524T000000Z" });
  });

  test("AWS's GET object example (a Range header, the empty body's hash)", () => {
    const headers = signedHeaders(
      {
        method: "GET",
        url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"),
        headers: { range: "bytes=0-9" },
        payloadHash: sha256Hex(""),
        nowMs: at,
      },
      aws,
    );
    expect(signatureOf(headers)).toBe("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  });

  test("AWS's presigned URL example", () => {
    expect(
      presignedUrl({ method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"), expiresS: 86400, nowMs: at }, aws),
    ).toBe(
      "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
        "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    );
  });

  test("a path-style key with spaces, UTF-8 and reserved characters, on a port: what botocore 1.43 signs for the same request", () => {
    const store: AttachmentStore = { store: "s3", bucket: "mail-files", region: "eu-west-3", endpoint: "http://s3.postroom.test:9000" };
    const url = s3ObjectUrl(store, "in box/2026/11/24/abc/Rechnung März (1)+$!*'.pdf");
    expect(url.toString()).toBe(
      "http://s3.postroom.test:9000/mail-files/in%20box/2026/11/24/abc/Rechnung%20M%C3%A4rz%20%281%29%2B%24%21%2A%27.pdf",
    );
    const cred = { accessKeyId: "AKID", secretAccessKey: "sec/ret+key", region: "eu-west-3" };
    const nowMs = Date.parse("2026-11-24T10:00:00Z");
    expect(
      signatureOf(
        signedHeaders({ method: "PUT", url, headers: { "content-type": "application/pdf" }, payloadHash: sha256Hex("hello"), nowMs }, cred),
      ),
    ).toBe("5e00b153a1dc6fffc4e641ca059ff3f4e9c75b3dd1d5246008941a7ed4090dbb");
    expect(new URL(presignedUrl({ method: "GET", url, expiresS: 3600, nowMs }, cred)).searchParams.get("X-Amz-Signature")).toBe(
      "0ca6e053191e8dc08a6950cf0966b3ef4d490d41203dfe0ef8533ee5e175c7a3",
    );
  });
});

describe("uploads connect to the address the egress guard checked", () => {
  let dns: TestDnsServer;
  // Two S3 servers on one port: 127.0.0.1, where the system resolver sends localhost,
  // and 127.0.0.2, where [dns] sends it.
  let system: S3rver;
  let checked: S3rver;
  let port: number;
  const dirs = [tempDir("postroom-s3rver-"), tempDir("postroom-s3rver-")];
  const created = { system: [] as string[], checked: [] as string[] };
  const attachment = {
    fileName: "report 1.pdf",
    contentType: "application/pdf",
    disposition: "attachment" as const,
    contentId: null,
    content: Buffer.from("%PDF-1.4 pinned"),
  };
  const s3rver = (address: string, port: number, dir: string, log: string[]) => {
    const s3 = new S3rver({
      port,
      address,
      silent: true,
      directory: dir,
      vhostBuckets: false,
      configureBuckets: [{ name: "mail-files", configs: [] }],
    });
    s3.on("event", (e) => log.push(...e.Records.map((r) => decodeURIComponent(r.s3.object.key))));
    return s3;
  };

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    // Names the system resolver cannot resolve; localhost, which it resolves to 127.0.0.1.
    dns.set("s3.postroom.test", [{ type: "A", address: "127.0.0.1" }]);
    dns.set("private-s3.postroom.test", [{ type: "A", address: "10.0.0.7" }]);
    dns.set("localhost", [{ type: "A", address: "127.0.0.2" }]);
    dns.set("test-net.postroom.test", [{ type: "A", address: "192.0.2.10" }]);
    system = s3rver("127.0.0.1", 0, dirs[0]!.path, created.system);
    port = (await system.run()).port;
    checked = s3rver("127.0.0.2", port, dirs[1]!.path, created.checked);
    await checked.run();
  });
  afterAll(async () => {
    await system.close();
    await checked.close();
    await dns.stop();
    for (const d of dirs) d.remove();
  });

  const store = (endpoint: string): AttachmentStore => ({
    store: "s3",
    bucket: "mail-files",
    region: "us-east-1",
    endpoint,
    path_prefix: "in/",
    access_key_id: "S3RVER",
    secret_access_key: "S3RVER",
  });
  const ctx = (allowPrivate: boolean) => ({
    nowMs: Date.now(),
    ttlMs: 3_600_000,
    resolver: createResolver({ servers: [dns.address], timeoutMs: 300, cacheTtlMs: 0 }),
    policy: { allowPrivate },
    timeoutMs: 1500,
  });
  const keyOf = (url: URL) => decodeURIComponent(url.pathname.replace("/mail-files/", ""));

  test("a name known only to [dns] is uploaded to the address [dns] gave, with the name as Host; the presigned URL serves it", async () => {
    const url = new URL(await uploadToS3(store(`http://s3.postroom.test:${port}`), attachment, ctx(true)));
    expect(url.host).toBe(`s3.postroom.test:${port}`);
    expect(url.pathname).toMatch(/^\/mail-files\/in\/\d{4}\/\d{2}\/\d{2}\/[0-9a-f]{24}\/report%201\.pdf$/);
    expect(created.system.at(-1)).toBe(keyOf(url));
    // The target would fetch it by name; here the name is known only to [dns], so go to the address.
    const got = await fetch(Object.assign(new URL(url), { hostname: "127.0.0.1" }), { headers: { host: url.host } });
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("%PDF-1.4 pinned");
  });

  test("localhost, which [dns] answers with 127.0.0.2: the upload goes to 127.0.0.2, not to the system's 127.0.0.1", async () => {
    const systemBefore = created.system.length;
    const url = new URL(await uploadToS3(store(`http://localhost:${port}`), attachment, ctx(true)));
    expect(url.host).toBe(`localhost:${port}`);
    // s3rver reports an object before it answers its PUT, and the upload ended with that
    // answer: nothing more can arrive at either server for it.
    expect(created.checked).toEqual([keyOf(url)]);
    expect(created.system.length).toBe(systemBefore);
  });

  test("refused: a [dns] answer that is private (private addresses not allowed), a TEST-NET address, a metadata endpoint", async () => {
    const before = created.system.length + created.checked.length;
    await expect(uploadToS3(store(`http://private-s3.postroom.test:${port}`), attachment, ctx(false))).rejects.toThrow(
      new EgressRefused("private-s3.postroom.test resolves to 10.0.0.7, a private, loopback or link-local address"),
    );
    await expect(uploadToS3(store(`http://localhost:${port}`), attachment, ctx(false))).rejects.toThrow(
      "localhost resolves to 127.0.0.2, a private",
    );
    await expect(uploadToS3(store(`http://test-net.postroom.test:${port}`), attachment, ctx(true))).rejects.toThrow(
      "test-net.postroom.test resolves to 192.0.2.10, not a usable address",
    );
    await expect(uploadToS3(store(`http://169.254.169.254:${port}`), attachment, ctx(true))).rejects.toThrow(
      "169.254.169.254 is a cloud metadata address",
    );
    // localhost, which the system resolves to 127.0.0.1, answered by [dns] with a TEST-NET address.
    dns.set("localhost", [{ type: "A", address: "192.0.2.10" }]);
    try {
      await expect(uploadToS3(store(`http://localhost:${port}`), attachment, ctx(true))).rejects.toThrow(
        "localhost resolves to 192.0.2.10, not a usable address",
      );
    } finally {
      dns.set("localhost", [{ type: "A", address: "127.0.0.2" }]);
    }
    // Each refusal came before any request (an upload that had been sent would have ended
    // with s3rver's answer, after its report).
    expect(created.system.length + created.checked.length).toBe(before);
  });

  test("an endpoint that takes the connection and never answers fails the upload at timeoutMs", async () => {
    const sockets: { end(): void }[] = [];
    const mute = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void sockets.push(s), data() {} } });
    try {
      const started = performance.now();
      await expect(uploadToS3(store(`http://s3.postroom.test:${mute.port}`), attachment, ctx(true))).rejects.toThrow(
        "the S3 endpoint did not answer in time",
      );
      expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      for (const s of sockets) s.end();
      mute.stop(true);
    }
  });

  test("an S3 error answer fails the upload with its status and code", async () => {
    const wrong = { ...store(`http://s3.postroom.test:${port}`), bucket: "no-such-bucket" };
    await expect(uploadToS3(wrong, attachment, ctx(true))).rejects.toThrow("S3 answered 404 NoSuchBucket");
  });
});
