// The dashboard's JavaScript and CSS, bundled by Bun from ui/index.html. In the compiled
// binary `bun build --compile` bundles them ahead of time and embeds the files (the
// import's `files`); run from source, they are bundled in memory on first use. Either
// way they are served from memory under /dashboard/assets/ with their content hash in the
// name, and the HTML page around them is ours (shell.ts), so its headers (CSP) are too.
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import page from "./ui/index.html";

export interface Asset {
  body: Uint8Array;
  contentType: string;
}

export interface AssetSet {
  /** By file name, as served under /dashboard/assets/. */
  files: Map<string, Asset>;
  scripts: string[];
  styles: string[];
}

let loading: Promise<AssetSet> | null = null;

/** The dashboard's bundled files (built once per process). */
export function dashboardAssets(): Promise<AssetSet> {
  loading ??= load().catch((err) => {
    loading = null;
    throw err;
  });
  return loading;
}

async function load(): Promise<AssetSet> {
  const set: AssetSet = { files: new Map(), scripts: [], styles: [] };
  const add = (name: string, body: Uint8Array, contentType: string) => {
    set.files.set(name, { body, contentType });
    if (name.endsWith(".js")) set.scripts.push(name);
    else if (name.endsWith(".css")) set.styles.push(name);
  };
  if (page.files) {
    for (const f of page.files) {
      if (f.loader === "html") continue;
      add(basename(f.path), await Bun.file(f.path).bytes(), f.headers["content-type"]);
    }
    return set;
  }
  const built = await Bun.build({
    entrypoints: [fileURLToPath(new URL("./ui/index.html", import.meta.url))],
    minify: true,
    target: "browser",
  });
  if (!built.success) throw new AggregateError(built.logs, "the dashboard could not be bundled");
  for (const out of built.outputs) {
    if (out.path.endsWith(".html")) continue;
    add(basename(out.path), new Uint8Array(await out.arrayBuffer()), out.type);
  }
  return set;
}
