// The builders of the config schema's keys: each kind of value (duration, size, listen
// address, rate, retention...) with its pattern and the sentence users read when a value
// does not fit. schema.ts and schema-accounts.ts are written with them.
import { FormatRegistry, Type, type TSchema } from "@sinclair/typebox";
import { isStoreUrl } from "./store-url.ts";
import { DURATION_PATTERN, parseListen, RATE_PATTERN, SIZE_PATTERN } from "./units.ts";

export const HEX16 = "^[0-9a-f]{16}$";
export const SECRET_HASH = "^sha256:[0-9a-f]{64}$";
// A listener is off only when its key is ""; an address that cannot be bound (a port past
// 65535, no port) is a config error, never a listener silently left out.
if (!FormatRegistry.Has("listen")) FormatRegistry.Set("listen", (v) => v === "" || parseListen(v) !== null);
// The message never quotes the value: a store URL carries the database's password.
if (!FormatRegistry.Has("store-url")) FormatRegistry.Set("store-url", isStoreUrl);

export const str = (def: string, description: string, extra: object = {}) => Type.String({ default: def, description, ...extra });
export const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
export const duration = (def: string, description: string) =>
  str(def, description, { pattern: DURATION_PATTERN, errorMessage: 'must be a duration such as "30s", "5m", "2h" or "5d"' });
export const size = (def: string, description: string) =>
  str(def, description, { pattern: SIZE_PATTERN, errorMessage: 'must be a size such as "512KB", "25MB" or "1GB"' });
export const listen = (def: string, description: string) =>
  str(def, description, {
    format: "listen",
    errorMessage: 'must be "host:port" with a port from 0 to 65535 (e.g. "0.0.0.0:25", "[::]:25"), or "" for off',
  });
export const rate = (def: string, description: string) =>
  str(def, description, { pattern: RATE_PATTERN, errorMessage: 'must be "N/s", "N/min", "N/h" or "off"' });
// A retention: a duration other than zero, or "off" (kept forever). Zero is refused
// rather than read as either: "0" means "forever" to some and "at once" to others.
export const NONZERO_DURATION = "(?=[0-9.]*[1-9])\\d+(\\.\\d+)?\\s*(ms|s|m|min|h|d)";
export const nonzeroDuration = (def: string, description: string) =>
  str(def, description, {
    pattern: `^\\s*${NONZERO_DURATION}\\s*$`,
    errorMessage: 'must be a duration above zero such as "30s", "10m" or "1h"',
  });
export const retention = (def: string, description: string) =>
  str(def, `${description}; "off" = kept forever`, {
    pattern: `^\\s*(off|${NONZERO_DURATION})\\s*$`,
    errorMessage: 'must be a duration above zero such as "7d" or "30d", or "off" to keep forever',
  });
export const int = (def: number, min: number, max: number, description: string) =>
  Type.Integer({ default: def, minimum: min, maximum: max, description, errorMessage: `must be an integer from ${min} to ${max}` });
export const section = <T extends Record<string, TSchema>>(props: T, description: string) =>
  Type.Object(props, { default: {}, description, additionalProperties: false });
