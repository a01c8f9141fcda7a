// The keys each TLS mode needs: every missing one named at once.
import { describe, expect, test } from "bun:test";
import { tlsRequiredKeyProblems } from "../../src/config/tls-required.ts";

const FILES = 'is required when tls.mode is "files"';
const ACME_LISTEN = 'is required when tls.mode is "acme"';
const ACME_DOMAINS = 'needs at least one name when tls.mode is "acme"';
const acme = (over: object) => ({ domains: ["mx.example.com"], challenge_listen: "0.0.0.0:80", ...over });

describe("tlsRequiredKeyProblems", () => {
  const cases: [string, unknown, string[]][] = [
    ["off needs nothing", { mode: "off", cert_file: "", key_file: "" }, []],
    ["no [tls] table", undefined, []],
    ["files with both", { mode: "files", cert_file: "/c.pem", key_file: "/k.pem" }, []],
    [
      "files with neither: both named",
      { mode: "files", cert_file: "", key_file: "" },
      [`tls.cert_file: ${FILES}`, `tls.key_file: ${FILES}`],
    ],
    ["files, keys left out", { mode: "files" }, [`tls.cert_file: ${FILES}`, `tls.key_file: ${FILES}`]],
    ["files without the key", { mode: "files", cert_file: "/c.pem", key_file: "" }, [`tls.key_file: ${FILES}`]],
    ["files without the certificate", { mode: "files", cert_file: "", key_file: "/k.pem" }, [`tls.cert_file: ${FILES}`]],
    ["acme complete", { mode: "acme", acme: acme({}) }, []],
    [
      "acme with neither: both named",
      { mode: "acme", acme: acme({ domains: [], challenge_listen: "" }) },
      [`tls.acme.domains: ${ACME_DOMAINS}`, `tls.acme.challenge_listen: ${ACME_LISTEN}`],
    ],
    ["acme without domains", { mode: "acme", acme: acme({ domains: [] }) }, [`tls.acme.domains: ${ACME_DOMAINS}`]],
    [
      "acme without a challenge listener",
      { mode: "acme", acme: acme({ challenge_listen: "" }) },
      [`tls.acme.challenge_listen: ${ACME_LISTEN}`],
    ],
    [
      "acme, no [tls.acme] table at all",
      { mode: "acme" },
      [`tls.acme.domains: ${ACME_DOMAINS}`, `tls.acme.challenge_listen: ${ACME_LISTEN}`],
    ],
    ["files needs no acme keys", { mode: "files", cert_file: "/c.pem", key_file: "/k.pem", acme: { domains: [] } }, []],
  ];
  test.each(cases)("%s", (_name, tls, expected) => {
    expect(tlsRequiredKeyProblems(tls).map((p) => `${p.path}: ${p.message}`)).toEqual(expected);
  });
});
