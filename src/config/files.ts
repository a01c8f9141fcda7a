// Files the config names (certificate, key, CA bundles) must be readable by the user the
// service runs as. systemd's unprivileged user meets a root-only file as "permission
// denied", which must be said as such, with the key that names the file, at
// check-config time and before serve starts: not as "no such file", not as a TLS
// listener that never comes up.
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import type { Problem } from "../lib/validation.ts";

/** The file-naming keys in use for a raw (not yet validated) config: key path → file path. */
export function namedFiles(raw: unknown): { path: string; file: string }[] {
  const at = (obj: unknown, key: string): unknown =>
    obj !== null && typeof obj === "object" ? (obj as Record<string, unknown>)[key] : undefined;
  const tls = at(raw, "tls");
  const mode = at(tls, "mode");
  const candidates: [string, unknown, boolean][] = [
    ["tls.cert_file", at(tls, "cert_file"), mode === "files"],
    ["tls.key_file", at(tls, "key_file"), mode === "files"],
    ["tls.acme.ca_file", at(at(tls, "acme"), "ca_file"), mode === "acme"],
    ["outbound.tls_ca_file", at(at(raw, "outbound"), "tls_ca_file"), true],
  ];
  return candidates
    .filter(([, file, used]) => used && typeof file === "string" && file !== "")
    .map(([path, file]) => ({ path, file: file as string }));
}

/** Why `file` cannot be read, in the words an operator acts on; null when it can. */
export async function unreadableReason(file: string): Promise<string | null> {
  try {
    await access(file, constants.R_OK);
    return null;
  } catch (err) {
    return `${file}: ${describeAccessError(err as NodeJS.ErrnoException)}`;
  }
}

/** An error from opening a file, as the reason an operator acts on. */
export function describeAccessError(err: { code?: string; message: string }): string {
  switch (err.code) {
    case "ENOENT":
      return "no such file";
    case "EACCES":
    case "EPERM":
      return `permission denied for ${runningAs()} (give that user or its group read access)`;
    case "ENOTDIR":
      return "a part of the path is not a directory";
    case "EISDIR":
      return "is a directory, not a file";
    default:
      return `cannot be read (${err.message})`;
  }
}

function runningAs(): string {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  return uid === undefined ? "this user" : `uid ${uid} gid ${gid}`;
}

export async function fileProblems(raw: unknown): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const { path, file } of namedFiles(raw)) {
    const reason = await unreadableReason(file);
    if (reason) problems.push({ path, message: reason });
  }
  return problems;
}
