// What a certificate says about itself, and whether a key belongs to it: read with
// node:crypto's X509Certificate so a bad pair is refused here, with a sentence, before a
// listener would throw on it.
import { createPrivateKey, X509Certificate } from "node:crypto";

/** A certificate and its private key, PEM. `cert` may hold the whole chain. */
export interface TlsMaterial {
  key: string;
  cert: string;
}

export interface CertificateInfo {
  /** DNS names of the subjectAltName (or the CN when there is none). */
  names: string[];
  /** The issuer's common name (or its whole DN when it has no CN). */
  issuer: string;
  /** Hex, uppercase, as openssl prints it. */
  serial: string;
  notBeforeMs: number;
  notAfterMs: number;
}

const DAY_MS = 86_400_000;

export function describeCertificate(certPem: string): CertificateInfo {
  const x509 = new X509Certificate(certPem);
  const altNames = (x509.subjectAltName ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4).toLowerCase());
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(x509.subject)?.[1];
  const issuerCn = /(?:^|\n)CN=([^\n]+)/.exec(x509.issuer)?.[1];
  return {
    names: altNames.length > 0 ? altNames : cn ? [cn.toLowerCase()] : [],
    issuer: issuerCn ?? x509.issuer.replace(/\n/g, ", "),
    serial: x509.serialNumber.toUpperCase(),
    notBeforeMs: Date.parse(x509.validFrom),
    notAfterMs: Date.parse(x509.validTo),
  };
}

/**
 * Why this pair cannot serve TLS, or null when it can: both parse, the key is the
 * certificate's, and the certificate is within its validity period.
 */
export function pairProblem(material: TlsMaterial, nowMs: number): string | null {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(material.cert);
  } catch (err) {
    return `the certificate is not a PEM X.509 certificate (${(err as Error).message})`;
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(material.key);
  } catch (err) {
    return `the key is not a PEM private key (${(err as Error).message})`;
  }
  if (!x509.checkPrivateKey(key)) return "the key does not match the certificate";
  if (Date.parse(x509.validTo) <= nowMs) return `the certificate expired on ${new Date(x509.validTo).toISOString()}`;
  return null;
}

/** Whole days until the certificate expires (negative once it has). */
export function daysLeft(info: CertificateInfo, nowMs: number): number {
  return Math.floor((info.notAfterMs - nowMs) / DAY_MS);
}
