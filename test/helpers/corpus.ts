// Where ../shared/corpus is: the corpora written by others that tests run over. Next to
// the checkout by convention; a clone elsewhere (a CI runner) names it with
// POSTROOM_CORPUS_DIR. A missing corpus throws: it is never a silent skip.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

function corpusRoot(): string {
  const candidates = [process.env.POSTROOM_CORPUS_DIR, fileURLToPath(new URL("../../../shared/corpus/", import.meta.url)), "/work/shared/corpus"].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(join(p, "README.md")));
  if (!found) throw new Error(`the shared corpus was not found (looked in ${candidates.join(", ")}); set POSTROOM_CORPUS_DIR`);
  return found;
}

/** Absolute path of `relative` inside the corpus, with a trailing slash kept. */
export function corpusPath(relative = ""): string {
  return join(corpusRoot(), relative) + (relative.endsWith("/") ? "/" : "");
}
