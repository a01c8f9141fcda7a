// The admin view's Accounts page (the operator API, API.md section 10): every account, the
// config's (read only) and the API's; create one, suspend, resume or delete it, mint and
// revoke its API tokens, add outbound accounts and rotate their keys. A new secret is shown
// once, in a note with a copy button: the server keeps only its hash.
import { useEffect, useState } from "preact/hooks";
import { call, errorText } from "../api.ts";
import { CopyButton, ErrorNote, TableHead, Time } from "../parts.tsx";

interface Token {
  id: string;
  name: string;
  scopes: string[];
  created_at: string | null;
  last_used_at: string | null;
}
interface Outbound {
  id: string;
  name: string;
  send_rate_limit: string;
  ip_pool: string | null;
  keys: { id: string; created_at: string | null }[];
}
export interface OperatorAccount {
  id: string;
  name: string;
  source: "config" | "api";
  rate_limit: string;
  suspended: boolean;
  created_at: string | null;
  api_tokens: Token[];
  outbound_accounts: Outbound[];
}

export const OPERATOR_PATH = "/api/v0.1/operator";

/** A secret just made: what it is and its value, shown until the page moves on. */
interface Shown {
  what: string;
  secret: string;
}

export function Accounts() {
  const [accounts, setAccounts] = useState<OperatorAccount[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<Shown | null>(null);
  const [name, setName] = useState("");
  const reload = () => call<OperatorAccount[]>("GET", `${OPERATOR_PATH}/accounts`).then(setAccounts, (err) => setError(errorText(err)));
  useEffect(() => void reload(), []);
  /** Runs an operator call, then reloads the list; a failure is shown. */
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(errorText(err));
    }
    await reload();
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const made = await call<OperatorAccount>("POST", `${OPERATOR_PATH}/accounts`, { name: name.trim() });
      setShown(null);
      setName("");
      setError(null);
      return made;
    });
  };
  return (
    <section aria-labelledby="h-accounts">
      <h1 id="h-accounts">Accounts</h1>
      <form class="card" onSubmit={create} aria-labelledby="h-new-account">
        <h2 id="h-new-account">New account</h2>
        <div class="fields">
          <div>
            <label for="account-name">Name</label>
            <input id="account-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
        </div>
        <button type="submit">Create account</button>
      </form>
      <ErrorNote error={error} />
      {shown && <SecretNote shown={shown} />}
      {accounts?.map((a) => (
        <AccountCard key={a.id} account={a} act={act} show={setShown} />
      ))}
    </section>
  );
}

function SecretNote({ shown }: { shown: Shown }) {
  return (
    <div class="card" role="status" aria-label="New secret">
      <p>
        {shown.what}: <code>{shown.secret}</code> <CopyButton text={shown.secret} label={`Copy ${shown.what}`} />
      </p>
      <p>It is shown this once: the server keeps only its hash.</p>
    </div>
  );
}

function AccountCard({
  account: a,
  act,
  show,
}: {
  account: OperatorAccount;
  act: (fn: () => Promise<unknown>) => Promise<void>;
  show: (s: Shown) => void;
}) {
  const base = `${OPERATOR_PATH}/accounts/${a.id}`;
  const [scope, setScope] = useState("write");
  const editable = a.source === "api";
  const mint = () =>
    act(async () => {
      const t = await call<{ token: string }>("POST", `${base}/api_tokens`, { scopes: scope === "read" ? ["read"] : ["read", "write"] });
      show({ what: `API token of ${a.name || a.id}`, secret: t.token });
    });
  const newOutbound = () =>
    act(async () => {
      const o = await call<{ id: string; key: string }>("POST", `${base}/outbound_accounts`, {});
      show({ what: `key of outbound account ${o.id} (the SMTP password; the username is ${o.id})`, secret: o.key });
    });
  const addKey = (id: string) =>
    act(async () => {
      const k = await call<{ key: string }>("POST", `${base}/outbound_accounts/${id}/keys`);
      show({ what: `new key of outbound account ${id}`, secret: k.key });
    });
  return (
    <article class="card" aria-labelledby={`h-${a.id}`}>
      <h2 id={`h-${a.id}`}>
        {a.name || a.id} {a.suspended && <span class="status rejected">suspended</span>}
      </h2>
      <p>
        <code>{a.id}</code> · {a.source === "config" ? "from the config file (change it there)" : "made through the API"} · {a.rate_limit}
      </p>
      {editable && (
        <div class="buttons">
          <button type="button" class="secondary" onClick={() => act(() => call("PATCH", base, { suspended: !a.suspended }))}>
            {a.suspended ? `Resume ${a.name || a.id}` : `Suspend ${a.name || a.id}`}
          </button>
          <button type="button" class="danger" onClick={() => confirm(`Delete ${a.name || a.id}?`) && act(() => call("DELETE", base))}>
            Delete {a.name || a.id}
          </button>
        </div>
      )}
      <h3>API tokens</h3>
      <table>
        <TableHead columns={["Token", "Scopes", "Created", "Last used", { hidden: "Actions" }]} />
        <tbody>
          {a.api_tokens.map((t) => (
            <tr key={t.id}>
              <td>
                <code>{t.id}</code> {t.name}
              </td>
              <td>{t.scopes.join(", ")}</td>
              <td>
                <Time iso={t.created_at} />
              </td>
              <td>
                <Time iso={t.last_used_at} />
              </td>
              <td>
                {editable && (
                  <button type="button" class="small danger" onClick={() => act(() => call("DELETE", `${base}/api_tokens/${t.id}`))}>
                    Revoke token {t.id}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {editable && (
        <div class="buttons">
          <label for={`scope-${a.id}`}>Scopes</label>
          <select id={`scope-${a.id}`} value={scope} onChange={(e) => setScope(e.currentTarget.value)}>
            <option value="write">read and write</option>
            <option value="read">read only</option>
          </select>
          <button type="button" onClick={mint}>
            Mint a token for {a.name || a.id}
          </button>
        </div>
      )}
      <h3>Outbound accounts</h3>
      <table>
        <TableHead columns={["SMTP username", "Send rate", "IP pool", "Keys", { hidden: "Actions" }]} />
        <tbody>
          {a.outbound_accounts.map((o) => (
            <tr key={o.id}>
              <td>
                <code>{o.id}</code> {o.name}
              </td>
              <td>{o.send_rate_limit}</td>
              <td>{o.ip_pool ?? "—"}</td>
              <td>
                {o.keys.map((k) => (
                  <span key={k.id}>
                    <code>{k.id}</code>{" "}
                    {editable && (
                      <button
                        type="button"
                        class="small danger"
                        onClick={() => act(() => call("DELETE", `${base}/outbound_accounts/${o.id}/keys/${k.id}`))}
                      >
                        Revoke key {k.id}
                      </button>
                    )}{" "}
                  </span>
                ))}
              </td>
              <td>
                {editable && o.keys.length < 2 && (
                  <button type="button" class="small secondary" onClick={() => addKey(o.id)}>
                    Add a key to {o.id}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {editable && (
        <button type="button" class="secondary" onClick={newOutbound}>
          New outbound account for {a.name || a.id}
        </button>
      )}
    </article>
  );
}
