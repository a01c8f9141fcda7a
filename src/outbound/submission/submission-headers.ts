// What a submitted message's own headers say about how to send it (docs/sending.md, SMTP submission):
// tags and class, in Postroom's names or the hosted service's, read and then removed so
// they never leave the server.
import type { Priority } from "../queue/message.ts";
import type { MessageHeaders } from "../compose/raw-headers.ts";
import { nulPath } from "../../lib/stored-text.ts";

const TAG_HEADERS = ["x-postroom-tags", "x-cloudmta-tags"];
const CLASS_HEADERS = ["x-postroom-class", "x-cloudmta-class"];
const CLASSES: readonly Priority[] = ["standard", "priority", "digest"];

export function takeSendingHeaders(h: MessageHeaders): { tags: string[]; priority: Priority } {
  const tags = TAG_HEADERS.flatMap((name) => h.all(name))
    .flatMap((v) => v.split(","))
    .map((t) => t.trim())
    .filter((t) => t !== "");
  const cls = CLASS_HEADERS.flatMap((name) => h.all(name))
    .map((v) => v.trim().toLowerCase())
    .find((v): v is Priority => (CLASSES as readonly string[]).includes(v));
  for (const name of [...TAG_HEADERS, ...CLASS_HEADERS]) h.remove(name);
  return { tags: [...new Set(tags)].slice(0, 20), priority: cls ?? "standard" };
}

/**
 * The name of the first field whose value (decoded: an encoded word may carry one too) holds
 * NUL, or null. What is stored of a submitted message must hold none (src/lib/stored-text.ts),
 * and a message we sign and send in the author's name is refused rather than changed.
 */
export function nulField(fields: Record<string, unknown>): string | null {
  for (const [name, value] of Object.entries(fields)) if (nulPath(value) !== null) return name;
  return null;
}
