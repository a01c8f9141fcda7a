// The files a config names, and how a file that cannot be read is said to the operator.
import { describe, expect, test } from "bun:test";
import { describeAccessError, namedFiles } from "../../src/config/files.ts";

describe("namedFiles: the files in use for the TLS mode", () => {
  const cases: [string, unknown, string[]][] = [
    [
      "files mode: certificate and key",
      { tls: { mode: "files", cert_file: "/c.pem", key_file: "/k.pem" } },
      ["tls.cert_file", "tls.key_file"],
    ],
    ["off: certificate keys left over are not read", { tls: { mode: "off", cert_file: "/c.pem", key_file: "/k.pem" } }, []],
    ["acme: its CA bundle", { tls: { mode: "acme", cert_file: "/c.pem", acme: { ca_file: "/ca.pem" } } }, ["tls.acme.ca_file"]],
    ["the outbound CA bundle whatever the mode", { outbound: { tls_ca_file: "/o.pem" } }, ["outbound.tls_ca_file"]],
    ['"" names no file', { tls: { mode: "files", cert_file: "", key_file: "" }, outbound: { tls_ca_file: "" } }, []],
    ["a value of the wrong type is the schema's to report", { tls: { mode: "files", cert_file: 5 } }, []],
    ["not an object at all", "nonsense", []],
  ];
  for (const [name, raw, paths] of cases) test(name, () => expect(namedFiles(raw).map((f) => f.path)).toEqual(paths));
});

describe("describeAccessError", () => {
  const cases: [string, string, RegExp][] = [
    ["ENOENT", "no such file", /^no such file$/],
    ["EACCES", "", /^permission denied for uid \d+ gid \d+ \(give that user or its group read access\)$/],
    ["EPERM", "", /^permission denied for uid \d+/],
    ["ENOTDIR", "", /^a part of the path is not a directory$/],
    ["EISDIR", "", /^is a directory, not a file$/],
    ["EIO", "i/o error", /^cannot be read \(i\/o error\)$/],
  ];
  for (const [code, message, expected] of cases) test(code, () => expect(describeAccessError({ code, message })).toMatch(expected));
});
