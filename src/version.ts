import pkg from "../package.json" with { type: "json" };

/** The release, embedded at build time (a compiled binary has no package.json beside it). */
export const VERSION: string = pkg.version;
