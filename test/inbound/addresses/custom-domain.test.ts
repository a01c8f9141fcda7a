import { describe, expect, test } from "bun:test";
import { attachmentStoreProblems } from "../../../src/inbound/addresses/attachment-store.ts";
import { authRegexProblem, compileAuthRegex, mxPointsAt } from "../../../src/inbound/addresses/custom-domain.ts";
import { normalizeDomain } from "../../../src/lib/domain-name.ts";

describe("normalizeDomain", () => {
  test.each([
    ["Example.COM", "example.com"],
    ["example.com.", "example.com"],
    [" mail.example.co.uk ", "mail.example.co.uk"],
    ["bücher.de", "xn--bcher-kva.de"],
  ])("%p → %p", (input, out) => expect(normalizeDomain(input)).toBe(out));
  test.each([
    "localhost",
    "192.168.1.1",
    "-bad.com",
    "bad-.com",
    "a..com",
    "ex ample.com",
    "user@example.com",
    "example.com/x",
    "",
    "a".repeat(64) + ".com",
  ])("%p is refused", (input) => expect(normalizeDomain(input)).toBeNull());
});

describe("auth_regex", () => {
  test("must compile", () => {
    expect(authRegexProblem("^sales@")).toBeNull();
    expect(authRegexProblem("(unclosed")).toStartWith("is not a valid regular expression (");
    expect(authRegexProblem("[z-a]")).toStartWith("is not a valid regular expression (");
    expect(authRegexProblem("a".repeat(600))).toBe("must be at most 512 characters");
  });
  test.each([
    ["sales@example\\.com", "sales@example.com", true],
    ["sales@example\\.com", "SALES@Example.com", true],
    ["sales@example\\.com", "presales@example.com", false],
    ["sales@example\\.com", "sales@example.com.evil", false],
    ["(sales|support)@.*", "support@example.com", true],
    ["(sales|support)@.*", "billing@example.com", false],
  ])("%p against %p: %p (the whole recipient must match)", (source, rcpt, ok) => expect(compileAuthRegex(source).test(rcpt)).toBe(ok));
});

describe("mxPointsAt", () => {
  test.each([
    [[{ exchange: "mx.postroom.test", priority: 10 }], true],
    [[{ exchange: "MX.Postroom.Test.", priority: 10 }], true],
    [
      [
        { exchange: "other.test", priority: 5 },
        { exchange: "mx.postroom.test", priority: 20 },
      ],
      true,
    ],
    [[{ exchange: "other.test", priority: 5 }], false],
    [[], false],
  ])("%j → %p", (records, ok) => expect(mxPointsAt(records, "mx.postroom.test")).toBe(ok));
});

describe("attachment store rules", () => {
  test.each([
    [{}, []],
    [{ store: "local" }, []],
    [{ store: "s3", bucket: "my-bucket", region: "eu-west-1", access_key_id: "AK", secret_access_key: "SK" }, []],
    [{ store: "s3", bucket: "my-bucket" }, ["attachments.region", "attachments.access_key_id", "attachments.secret_access_key"]],
    [{ store: "local", bucket: "b" }, ["attachments.bucket"]],
    [{ bucket: "b" }, ["attachments.bucket"]],
    [{ store: "s3", bucket: "Bad_Bucket", region: "r", access_key_id: "a", secret_access_key: "s" }, ["attachments.bucket"]],
    [
      { store: "s3", bucket: "bucket", region: "r", access_key_id: "a", secret_access_key: "s", endpoint: "ftp://x" },
      ["attachments.endpoint"],
    ],
    [
      { store: "s3", bucket: "bucket", region: "r", access_key_id: "a", secret_access_key: "s", endpoint: "http://127.0.0.1:9000" },
      ["attachments.endpoint"],
    ],
    [{ store: "s3", bucket: "bucket", region: "r", access_key_id: "a", secret_access_key: "s", endpoint: "http://s3.internal:9000" }, []],
    [{ store: "s3", bucket: "bucket", region: "r", access_key_id: "a", secret_access_key: "s", endpoint: "https://93.184.216.34" }, []],
  ])("%j", (input, paths) => expect(attachmentStoreProblems(input as never).map((p) => p.path)).toEqual(paths));

  test("an IP endpoint: private ones only when allowed, metadata ones never", () => {
    const s3 = (endpoint: string) => ({
      store: "s3" as const,
      bucket: "bucket",
      region: "r",
      access_key_id: "a",
      secret_access_key: "s",
      endpoint,
    });
    expect(attachmentStoreProblems(s3("http://10.1.2.3:9000"), true)).toEqual([]);
    expect(attachmentStoreProblems(s3("http://[::ffff:169.254.169.254]/"), true)).toEqual([
      { path: "attachments.endpoint", message: "points at a cloud metadata address (::ffff:a9fe:a9fe)" },
    ]);
  });
});
