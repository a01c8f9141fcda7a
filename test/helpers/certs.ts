// Self-signed certificates for TLS tests, made with the openssl CLI (a real peer tool).
import { join } from "node:path";

export function makeSelfSignedCert(dir: string, commonName: string, name = "server", days = 2): { certFile: string; keyFile: string } {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  const proc = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", String(days), "-subj", `/CN=${commonName}`, "-addext", `subjectAltName=DNS:${commonName}`],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (proc.exitCode !== 0) throw new Error(`openssl failed: ${proc.stderr.toString()}`);
  return { certFile, keyFile };
}
