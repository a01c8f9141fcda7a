// A small router over the History API: the dashboard is one page, its views are paths
// under /dashboard/ so that each can be bookmarked and reloaded.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/dashboard";

export function navigate(path: string): void {
  history.pushState(null, "", BASE + path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current view path (after /dashboard), e.g. "/addresses" or "/incoming?address=...". */
export function useLocation(): { path: string; search: URLSearchParams } {
  const read = () => ({ path: location.pathname.slice(BASE.length) || "/", search: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return loc;
}

/** Props for an <a> that navigates inside the dashboard without reloading the page. */
export function link(path: string) {
  return {
    href: BASE + path,
    onClick: (e: MouseEvent) => {
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      navigate(path);
    },
  };
}
