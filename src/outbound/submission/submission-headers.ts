// What a submitted message's own headers say about how to send it (docs/sending.md, SMTP submission):
// tags and class, in Postroom's names or the hosted service's, read and then removed so
// they never leave the server.
import type { Priority } from "../queue/message.ts";
import type { MessageHeaders } from "../compose/raw-headers.ts";

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
