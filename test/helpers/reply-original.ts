// The unpatched email-reply-parser 2.3.9, installed under an alias (devDependency
// "email-reply-parser-original"), whose answers our reply parser (src/inbound/payload/reply/) must
// give. bun applies a patchedDependencies entry to an alias of the same name@version, so
// there must be none for email-reply-parser: assertUnpatched() fails if the package's
// files carry a patch.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import EmailReplyParser from "email-reply-parser-original";

const DIST = dirname(Bun.resolveSync("email-reply-parser-original", import.meta.dir));

/** reply_plain as the unpatched package gives it (src/inbound/payload/reply-text.ts's trim and size limit). */
export function originalReplyText(plain: string): string {
  return new EmailReplyParser().parseReply(plain).trim();
}

/** The package's own regex tables (not in its exports map, so read by path). */
export async function originalTables(): Promise<{ quoteHeadersRegex: RegExp[]; signatureRegex: RegExp[] }> {
  return (await import(join(DIST, "regex.js"))).default;
}

export function assertUnpatched(): void {
  for (const file of ["email.js", "parser/emailparser.js"]) {
    if (readFileSync(join(DIST, file), "utf8").includes("Postroom patch"))
      throw new Error(`${DIST}/${file} is patched: remove its patchedDependencies entry`);
  }
}
