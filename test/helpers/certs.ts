// Self-signed certificates for TLS tests, made with the openssl CLI (a real peer tool).
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export function makeSelfSignedCert(dir: string, commonName: string, name = "server", days = 2): { certFile: string; keyFile: string } {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  const proc = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      String(days),
      "-subj",
      `/CN=${commonName}`,
      "-addext",
      `subjectAltName=DNS:${commonName}`,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (proc.exitCode !== 0) throw new Error(`openssl failed: ${proc.stderr.toString()}`);
  return { certFile, keyFile };
}

function openssl(args: string[]): void {
  const proc = Bun.spawnSync(["openssl", ...args], { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${proc.stderr.toString()}`);
}

export interface TestCa {
  certFile: string;
  keyFile: string;
  /** A certificate for `subjectAltName` (e.g. "DNS:mx.example.test,IP:127.0.0.1") signed by this CA. */
  issue(name: string, subjectAltName: string): { certFile: string; keyFile: string };
}

/** A throwaway certificate authority (openssl), for servers a test must verify. */
export function makeTestCa(dir: string, commonName = "postroom test CA"): TestCa {
  const certFile = join(dir, "ca.crt");
  const keyFile = join(dir, "ca.key");
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "2",
    "-subj",
    `/CN=${commonName}`,
  ]);
  return {
    certFile,
    keyFile,
    issue(name, subjectAltName) {
      const [key, csr, crt, ext] = [`${name}.key`, `${name}.csr`, `${name}.crt`, `${name}.ext`].map((f) => join(dir, f)) as [
        string,
        string,
        string,
        string,
      ];
      writeFileSync(ext, `subjectAltName=${subjectAltName}\n`);
      openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", `/CN=${name}`]);
      openssl([
        "x509",
        "-req",
        "-in",
        csr,
        "-CA",
        certFile,
        "-CAkey",
        keyFile,
        "-CAcreateserial",
        "-out",
        crt,
        "-days",
        "2",
        "-extfile",
        ext,
      ]);
      return { certFile: crt, keyFile: key };
    },
  };
}
