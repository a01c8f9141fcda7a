// Worker thread entry points, located from the source root: in a compiled binary every
// module shares the binary's URL and the workers are embedded relative to src/ (the build
// script names them as extra entry points), so paths must be taken from here.
export const EXTRACT_WORKER_URL = new URL("./inbound/parse/extract-worker.ts", import.meta.url).href;
export const SIGN_WORKER_URL = new URL("./domains/sign-worker.ts", import.meta.url).href;
export const PURGE_WORKER_URL = new URL("./jobs/purge-worker.ts", import.meta.url).href;
export const SEARCH_WORKER_URL = new URL("./repos/search-worker.ts", import.meta.url).href;
