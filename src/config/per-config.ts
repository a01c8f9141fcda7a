// Values derived from the running config, built once per loaded config instead of on
// every call: the inbound path asks for its dependencies several times per message.
// A reload (SIGHUP) swaps the config object, and the next call builds afresh.

/** `build(config)`, cached until `current()` returns another config object. */
export function perConfig<C extends object, T>(current: () => C, build: (config: C) => T): () => T {
  let seen: C | undefined;
  let value: T;
  return () => {
    const config = current();
    if (config !== seen) {
      value = build(config);
      seen = config;
    }
    return value;
  };
}
