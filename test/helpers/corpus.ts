// Where the corpora written by others are: test/corpus/ in this repository (each folder
// with its licence and a README naming its source; see test/corpus/README.md). A missing
// corpus throws: it is never a silent skip.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const CORPUS_ROOT = fileURLToPath(new URL("../corpus/", import.meta.url));

function corpusRoot(): string {
  if (!existsSync(join(CORPUS_ROOT, "README.md")))
    throw new Error(`the test corpus was not found in ${CORPUS_ROOT} (it is part of the repository: test/corpus/)`);
  return CORPUS_ROOT;
}

/** Absolute path of `relative` inside the corpus, with a trailing slash kept. */
export function corpusPath(relative = ""): string {
  return join(corpusRoot(), relative) + (relative.endsWith("/") ? "/" : "");
}
