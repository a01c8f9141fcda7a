// The dashboard: the session decides between the sign-in page and the signed-in layout
// (navigation, the view of the current path, sign out).
import { useEffect, useState } from "preact/hooks";
import { call, get, whenSignedOut, type Session } from "./api.ts";
import { link, navigate, useLocation } from "./router.ts";
import { SignIn } from "./pages/sign-in.tsx";
import { Addresses } from "./pages/addresses.tsx";
import { Incoming } from "./pages/incoming.tsx";
import { Sent, SentMessage } from "./pages/sent.tsx";
import { NotFound } from "./pages/not-found.tsx";
import { Domain, Domains } from "./pages/domains.tsx";
import { Suppressions } from "./pages/suppressions.tsx";
import { Smtp } from "./pages/smtp.tsx";
import { Overview } from "./pages/overview.tsx";
import { AddressPage } from "./pages/address.tsx";

const NAV: { path: string; label: string }[] = [
  { path: "/overview", label: "Overview" },
  { path: "/addresses", label: "Addresses" },
  { path: "/incoming", label: "Incoming" },
  { path: "/sent", label: "Sent" },
  { path: "/domains", label: "Domains" },
  { path: "/suppressions", label: "Suppressions" },
  { path: "/smtp", label: "SMTP" },
];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    get<Session>("/dashboard/session").then(setSession, () => setSession(null));
  }, []);
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  return <SignedIn session={session} onSignedOut={() => setSession(null)} />;
}

function SignedIn({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const { path, search } = useLocation();
  useEffect(() => {
    if (path === "/" || path === "/sign-in") navigate("/overview");
  }, [path]);
  const signOut = async () => {
    await call("DELETE", "/dashboard/session").catch(() => {});
    onSignedOut();
    navigate("/sign-in");
  };
  return (
    <>
      <header class="top">
        <span class="brand">Postroom</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.path}>
                <a {...link(n.path)} aria-current={path.startsWith(n.path) ? "page" : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who" title={session.account_id}>
          {session.account_name || session.account_id}
        </span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">{view(session, path, search)}</main>
    </>
  );
}

function view(session: Session, path: string, search: URLSearchParams) {
  if (path === "/" || path === "/sign-in") return null;
  if (path === "/overview") return <Overview session={session} />;
  if (path === "/addresses") return <Addresses session={session} />;
  const address = /^\/addresses\/([0-9a-f]{20})$/.exec(path);
  if (address) return <AddressPage session={session} id={address[1]!} />;
  if (path === "/incoming") return <Incoming session={session} addressId={search.get("address")} query={search.get("query") ?? ""} />;
  if (path === "/sent") return <Sent session={session} outboundId={search.get("outbound")} query={search.get("query") ?? ""} />;
  const sent = /^\/sent\/([0-9a-f-]{36})$/.exec(path);
  if (sent) return <SentMessage session={session} id={sent[1]!} />;
  if (path === "/domains") return <Domains session={session} />;
  const domain = /^\/domains\/([0-9a-f]{16})$/.exec(path);
  if (domain) return <Domain session={session} id={domain[1]!} />;
  if (path === "/smtp") return <Smtp session={session} />;
  if (path === "/suppressions") return <Suppressions session={session} outboundId={search.get("outbound")} query={search.get("query") ?? ""} />;
  return <NotFound />;
}
