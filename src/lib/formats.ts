// String formats shared by the config schema and the API schemas. TypeBox leaves
// formats to the application; registering them once here keeps both in agreement.
import { FormatRegistry } from "@sinclair/typebox";
import { isIP } from "node:net";

export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
}

if (!FormatRegistry.Has("http-url")) FormatRegistry.Set("http-url", isHttpUrl);
if (!FormatRegistry.Has("ipv4-or-ipv6")) FormatRegistry.Set("ipv4-or-ipv6", (v) => isIP(v) !== 0);
