// The dashboard's HTML page (the same for every dashboard URL: the app routes in the
// browser) and the headers every dashboard response carries.

/**
 * Nothing but this origin's own scripts, styles and API; no inline script or style, no
 * framing of the dashboard. Message HTML is shown in a sandboxed frame from `srcdoc`
 * (no scripts, no remote content: img-src allows data: only).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": DASHBOARD_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
};

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** The page: the bundle's styles and scripts, and a root the app renders into. */
export function shellHtml(scripts: readonly string[], styles: readonly string[]): string {
  const links = styles.map((s) => `<link rel="stylesheet" href="/dashboard/assets/${escapeAttr(s)}">`).join("");
  const tags = scripts.map((s) => `<script type="module" src="/dashboard/assets/${escapeAttr(s)}"></script>`).join("");
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="color-scheme" content="light dark">' +
    // No favicon request (there is none to serve).
    '<link rel="icon" href="data:,">' +
    `<title>Postroom</title>${links}${tags}</head>` +
    '<body><div id="app"><noscript>The Postroom dashboard needs JavaScript.</noscript></div></body></html>'
  );
}
