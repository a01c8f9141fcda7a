// A feature as src/app.ts composes it: what it starts, what it stops, and the jobs it hands
// to the scheduler. Each feature folder builds one (its feature.ts) from the narrow
// dependencies it uses; the app starts them in order and stops them in reverse, so a
// feature stops after every one that was built on it.

/** A periodic job: `every` is a cron pattern with seconds ("0 * * * * *") or an interval in ms. */
export interface Job {
  name: string;
  every: string | number;
  run(): Promise<unknown>;
  /** Once per cluster, on the node holding the job's lease; false (the default) on every node. */
  oncePerCluster?: boolean;
}

export interface Feature<C = unknown> {
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
  /** After a config reload (SIGHUP), with the config before and after: what must act on a change at once. */
  reloaded?(previous: C, next: C): void;
  jobs?: readonly Job[];
}
