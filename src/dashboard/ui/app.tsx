// The dashboard: the session decides between the sign-in page and the signed-in layout
// (navigation, the view of the current path, sign out).
import { useEffect, useState } from "preact/hooks";
import { call, chooseAccount, get, sessionView, whenSignedOut, type ServerSession, type Session } from "./api.ts";
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
import { Webhook } from "./pages/webhook.tsx";
import { Queue } from "./pages/queue.tsx";
import { System } from "./pages/system.tsx";
import { Accounts } from "./pages/accounts.tsx";
import { Audit } from "./pages/audit.tsx";
import { WaitingMail } from "./pages/waiting.tsx";

const NAV: { path: string; label: string }[] = [
  { path: "/overview", label: "Overview" },
  { path: "/addresses", label: "Addresses" },
  { path: "/incoming", label: "Incoming" },
  { path: "/waiting", label: "Waiting" },
  { path: "/sent", label: "Sent" },
  { path: "/domains", label: "Domains" },
  { path: "/suppressions", label: "Suppressions" },
  { path: "/webhook", label: "Webhook" },
  { path: "/smtp", label: "SMTP" },
];

/** The admin view's own pages: the appliance, and the operator API's accounts and audit log. */
const ADMIN_NAV = [
  { path: "/queue", label: "Queue" },
  { path: "/system", label: "System" },
  { path: "/accounts", label: "Accounts" },
  { path: "/audit", label: "Audit" },
];

export function App() {
  const [server, setServer] = useState<ServerSession | null | undefined>(undefined);
  const [chosen, setChosen] = useState<string | null>(null);
  useEffect(() => {
    whenSignedOut(() => setServer(null));
    get<ServerSession>("/dashboard/session").then(setServer, () => setServer(null));
  }, []);
  if (server === undefined) return <p class="loading">Loading…</p>;
  if (server === null) return <SignIn onSignedIn={setServer} />;
  const session = sessionView(server, chosen ?? undefined);
  if (!session) return <p class="loading">No account is configured yet.</p>;
  const choose = (id: string) => {
    chooseAccount(id);
    setChosen(id);
  };
  return <SignedIn key={session.account_id} session={session} onChoose={choose} onSignedOut={() => setServer(null)} />;
}

function SignedIn({ session, onChoose, onSignedOut }: { session: Session; onChoose: (id: string) => void; onSignedOut: () => void }) {
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
            {[...NAV, ...(session.admin ? ADMIN_NAV : [])].map((n) => (
              <li key={n.path}>
                <a {...link(n.path)} aria-current={path.startsWith(n.path) ? "page" : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {session.admin ? (
          <span class="who">
            <label for="account" class="inline">
              Account
            </label>{" "}
            <select id="account" value={session.account_id} onChange={(e) => onChoose(e.currentTarget.value)}>
              {session.accounts.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name || a.id}
                </option>
              ))}
            </select>
          </span>
        ) : (
          <span class="who" title={session.account_id}>
            {session.account_name || session.account_id}
          </span>
        )}
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
  if (path === "/waiting") return <WaitingMail session={session} />;
  if (path === "/sent") return <Sent session={session} outboundId={search.get("outbound")} query={search.get("query") ?? ""} />;
  const sent = /^\/sent\/([0-9a-f-]{36})$/.exec(path);
  if (sent) return <SentMessage session={session} id={sent[1]!} />;
  if (path === "/domains") return <Domains session={session} />;
  const domain = /^\/domains\/([0-9a-f]{16})$/.exec(path);
  if (domain) return <Domain session={session} id={domain[1]!} />;
  if (path === "/smtp") return <Smtp session={session} />;
  if (path === "/system" && session.admin) return <System />;
  if (path === "/accounts" && session.admin) return <Accounts />;
  if (path === "/audit" && session.admin) return <Audit />;
  if (path === "/queue" && session.admin) return <Queue />;
  if (path === "/webhook") return <Webhook session={session} outboundId={search.get("outbound")} />;
  if (path === "/suppressions")
    return <Suppressions session={session} outboundId={search.get("outbound")} query={search.get("query") ?? ""} />;
  return <NotFound />;
}
