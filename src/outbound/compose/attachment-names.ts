// Which blocked extension (outbound.blocked_extensions) an attachment's file name really
// has: the name is judged as the recipient's machine will read it, not as written.
// - Windows drops trailing dots and spaces ("evil.exe." and "evil.exe " are evil.exe), and
//   NTFS reads "evil.exe::$DATA" as evil.exe itself.
// - Invisible format characters (zero-width space, bidi controls) are ignored.
// - Mail clients decode RFC 2047 encoded words in the Content-Type name parameter (nodemailer
//   itself writes non-ASCII names that way), so "=?UTF-8?Q?evil=2Eexe?=" is evil.exe.
// - A name percent-decoded by a careless client, and cut at a NUL by one written in C:
//   "evil.exe%00.txt" is evil.exe there.
// - Quotes and the other characters Windows cannot store (" < > | ? * :) are dropped or
//   replaced where the file is saved, and a name quoted carelessly keeps them around it:
//   'evil.exe"' is evil.exe.
// - A value written as RFC 2231 writes it (charset'language'percent-encoded, what a
//   filename*= parameter holds) is read as its decoded text.
// Judged conservatively: a name is refused when any of these readings ends in a blocked
// extension. Case does not matter.
import libmime from "libmime";

const TRAILING = /(::\$data|[\s.])+$/iu;
const FORMAT_CHARS = /\p{Cf}/gu;

function percentDecoded(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function wordsDecoded(name: string): string {
  try {
    return libmime.decodeWords(name);
  } catch {
    return name;
  }
}

/** The name as Windows stores it: format characters gone, cut at a NUL, no trailing dots, spaces or ::$DATA. */
export function normalizedFileName(name: string): string {
  const cut = name.indexOf("\u0000");
  return (cut >= 0 ? name.slice(0, cut) : name).replace(FORMAT_CHARS, "").replace(TRAILING, "");
}

/** The extension (lower case, without the dot) of a normalised name, or null when it has none. */
export function extensionOf(name: string): string | null {
  return /\.([^.]+)$/.exec(normalizedFileName(name))?.[1]?.toLowerCase() ?? null;
}

const NOT_STORABLE = /["'<>|?*:]+$|["<>|?*]/g;
const RFC2231_VALUE = /^[A-Za-z0-9!#$%&+^_`{}~-]*'[A-Za-z0-9-]*'/;

/** Pure: every way a receiving client may read the name, each decoding and then without unstorable characters. */
export function fileNameReadings(fileName: string): Set<string> {
  const decoded = [fileName, wordsDecoded(fileName), percentDecoded(fileName)];
  if (RFC2231_VALUE.test(fileName)) decoded.push(percentDecoded(fileName.replace(RFC2231_VALUE, "")));
  const readings = new Set<string>();
  for (const name of decoded) {
    readings.add(name);
    // Dropped where they stand, then once more at the end (a quote left before trailing dots).
    readings.add(normalizedFileName(name.replace(NOT_STORABLE, "")).replace(NOT_STORABLE, ""));
    readings.add(name.replace(/^['"]+|['"]+$/g, ""));
  }
  return readings;
}

/** The blocked extension any reading of `fileName` ends in, or null when none does. */
export function blockedExtensionOf(fileName: string, blocked: readonly string[]): string | null {
  const list = new Set(blocked.map((e) => e.toLowerCase()));
  for (const reading of fileNameReadings(fileName)) {
    const ext = extensionOf(reading);
    if (ext !== null && list.has(ext)) return ext;
  }
  return null;
}
