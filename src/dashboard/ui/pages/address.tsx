// One address: edit its target, format and nickname (E4 PATCH), and its custom domains
// (E7-E9) with whether their MX points here.
import { useEffect, useState } from "preact/hooks";
import { accountPath, ApiFailure, call, errorText, get, type Session } from "../api.ts";
import { CopyButton, ErrorNote, FormatSelect, Host, More, NicknameField, TableHead, Time } from "../parts.tsx";
import { link } from "../router.ts";
import { useList } from "../use-list.ts";
import type { Address } from "./addresses.tsx";
import { NotFound } from "./not-found.tsx";

interface CustomDomain {
  id: string;
  domain: string;
  auth_regex: string | null;
  domain_target: string | null;
  mx_host: string;
  mx_verified: boolean;
  created_at: string;
}

export function AddressPage({ session, id }: { session: Session; id: string }) {
  const path = accountPath(session.account_id, `addresses/${id}`);
  const [address, setAddress] = useState<Address | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<Address>(path).then(setAddress, (err) =>
      err instanceof ApiFailure && err.status === 404 ? setAddress(null) : setError(errorText(err)),
    );
  }, [path]);
  if (address === null) return <NotFound what="address" />;
  if (address === undefined) return <ErrorNote error={error} />;
  return (
    <section aria-labelledby="h-address">
      <p>
        <a {...link("/addresses")}>← Addresses</a>
      </p>
      <h1 id="h-address">
        <code>{address.email}</code> <CopyButton text={address.email} label={`Copy ${address.email}`} />
      </h1>
      <p>
        Created <Time iso={address.created_at} />. <a {...link(`/incoming?address=${address.id}`)}>Received mail</a>
      </p>
      <TestPost path={path} />
      <EditAddress path={path} address={address} onSaved={setAddress} />
      <CustomDomains session={session} address={address} />
    </section>
  );
}

function EditAddress({ path, address, onSaved }: { path: string; address: Address; onSaved: (a: Address) => void }) {
  const [target, setTarget] = useState(address.target);
  const [format, setFormat] = useState(address.target_format);
  const [nickname, setNickname] = useState(address.nickname ?? "");
  const [keep, setKeep] = useState(address.store_messages === true);
  const [queue, setQueue] = useState(address.on_target_failure === "queue");
  const [threshold, setThreshold] = useState(address.spam_threshold == null ? "" : String(address.spam_threshold));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      onSaved(
        await call<Address>("PATCH", path, {
          target,
          target_format: format,
          nickname: nickname.trim() || null,
          store_messages: keep,
          on_target_failure: queue ? "queue" : "defer",
          // Not a number: sent as typed, and the API's 422 says what it must be.
          spam_threshold: threshold.trim() === "" ? null : Number.isFinite(Number(threshold)) ? Number(threshold) : threshold,
        }),
      );
      setSaved(true);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="h-edit">
      <h2 id="h-edit">Target</h2>
      <div class="fields">
        <div>
          <label for="target">Target URL</label>
          <input id="target" required value={target} onInput={(e) => setTarget(e.currentTarget.value)} />
          <p class="hint">A password in the URL shows as ***; leave it so to keep it.</p>
        </div>
        <FormatSelect value={format} onChange={setFormat} />
        <NicknameField value={nickname} onChange={setNickname} />
        <div>
          <label class="inline">
            <input type="checkbox" class="check" checked={keep} onChange={(e) => setKeep(e.currentTarget.checked)} /> Keep received messages
          </label>
          <p class="hint">
            Each message is stored (in the address's S3 store, or on this server) and linked as envelope.store_url and in Incoming.
          </p>
        </div>
        <div>
          <label class="inline">
            <input type="checkbox" class="check" checked={queue} onChange={(e) => setQueue(e.currentTarget.checked)} /> Keep mail while the
            target is down
          </label>
          <p class="hint">
            When the target answers 5xx or cannot be reached, accept the mail and post it again later (see Waiting); otherwise the sender is
            told to retry (451).
          </p>
        </div>
        <div>
          <label for="spam-threshold">Refuse spam above score (optional)</label>
          <input id="spam-threshold" inputMode="decimal" value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} />
          <p class="hint">With SpamAssassin set up (inbound.spamd), mail scoring above this is refused with 550; empty = never.</p>
        </div>
      </div>
      <ErrorNote error={error} />
      {saved && <p role="status">Saved.</p>}
      <button type="submit">Save</button>
    </form>
  );
}

function CustomDomains({ session, address }: { session: Session; address: Address }) {
  const domains = useList<CustomDomain>(accountPath(session.account_id, `custom_domains?address_id=${address.id}`));
  const [domain, setDomain] = useState("");
  const [authRegex, setAuthRegex] = useState("");
  const [error, setError] = useState<string | null>(null);
  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const body: Record<string, string> = { domain: domain.trim() };
      if (authRegex.trim()) body.auth_regex = authRegex.trim();
      await call("POST", accountPath(session.account_id, `custom_domains?address_id=${address.id}`), body);
      setDomain("");
      setAuthRegex("");
      domains.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async (d: CustomDomain) => {
    if (!confirm(`Remove ${d.domain}? Mail to it is refused from then on.`)) return;
    await call("DELETE", accountPath(session.account_id, `custom_domains/${d.id}?address_id=${address.id}`)).then(domains.reload, (err) =>
      setError(errorText(err)),
    );
  };
  return (
    <section class="card" aria-labelledby="h-custom">
      <h2 id="h-custom">Custom domains</h2>
      <p class="hint">Mail to a custom domain comes to this address once the domain's MX points at the host shown.</p>
      <table>
        <TableHead columns={["Domain", "MX must point at", "MX", "Recipients", { hidden: "Actions" }]} />
        <tbody>
          {domains.items.map((d) => (
            <tr key={d.id}>
              <td>{d.domain}</td>
              <td>
                <Host name={d.mx_host} />
              </td>
              <td>
                <span class={`status ${d.mx_verified ? "successful" : "rejected"}`}>
                  {d.mx_verified ? "points here" : "not pointing here"}
                </span>
              </td>
              <td>{d.auth_regex ? <code>{d.auth_regex}</code> : "any"}</td>
              <td>
                <button type="button" class="small danger" onClick={() => remove(d)} aria-label={`Remove ${d.domain}`}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <More list={domains} />
      <form onSubmit={add} aria-label="Add a custom domain">
        <div class="fields">
          <div>
            <label for="cd-domain">Domain</label>
            <input
              id="cd-domain"
              required
              value={domain}
              onInput={(e) => setDomain(e.currentTarget.value)}
              placeholder="shop.example.net"
            />
          </div>
          <div>
            <label for="cd-regex">Accepted recipients (regular expression, optional)</label>
            <input
              id="cd-regex"
              value={authRegex}
              onInput={(e) => setAuthRegex(e.currentTarget.value)}
              placeholder="(orders|billing)@shop\.example\.net"
            />
          </div>
        </div>
        <ErrorNote error={error ?? domains.error} />
        <button type="submit">Add custom domain</button>
      </form>
    </section>
  );
}

interface TestPostResult {
  status: string;
  status_category: "successful" | "rejected" | "delayed";
  smtp_reply: string;
  response: string | null;
  duration_ms: number;
}

/** "Send a test POST": a sample message to the target now, and what it answered. */
function TestPost({ path }: { path: string }) {
  const [result, setResult] = useState<TestPostResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(await call<TestPostResult>("POST", `${path}/test`));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card">
      <div class="buttons">
        <button type="button" onClick={run} disabled={busy}>
          Send a test POST
        </button>
      </div>
      <p class="hint">Posts a sample message to the target now, in the address's format. Nothing is recorded.</p>
      <ErrorNote error={error} />
      {result && (
        <div role="status">
          <p>
            The target answered <span class={`status ${result.status_category}`}>{result.status}</span> in {result.duration_ms} ms; a sender
            would have been told <code>{result.smtp_reply}</code>.
          </p>
          {result.response && <pre>{result.response}</pre>}
        </div>
      )}
    </div>
  );
}
