// Sending domains (E14-E18): add one, see the DNS records to publish with a status and
// the reason for each, "Verify now", the grace period of a domain whose records fail.
import { useEffect, useState } from "preact/hooks";
import { accountPath, ApiFailure, call, get, type Session } from "../api.ts";
import { CopyButton, ErrorNote, Host, More, TableHead, Time } from "../parts.tsx";
import { link, navigate } from "../router.ts";
import { useList } from "../use-list.ts";
import { type DomainHealth, DomainHealthView } from "./domain-health.tsx";
import { NotFound } from "./not-found.tsx";
import { SendingIpsWarning } from "./sending-ips.tsx";

interface DnsRecord {
  type: string;
  host: string;
  value: string;
  purpose: string;
  required: boolean;
  verified: boolean;
  reason: string | null;
}

interface SendingDomain {
  id: string;
  domain: string;
  sending_status: "verified" | "grace" | "unverified";
  grace_until: string | null;
  checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  dns_records: DnsRecord[];
  health: DomainHealth | null;
}

const STATUS_TEXT: Record<SendingDomain["sending_status"], string> = {
  verified: "verified",
  grace: "records failing (grace period)",
  unverified: "not verified",
};

export function Domains({ session }: { session: Session }) {
  const domains = useList<SendingDomain>(accountPath(session.account_id, "sending_domains"));
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const created = await call<SendingDomain>("POST", accountPath(session.account_id, "sending_domains"), { domain: name.trim() });
      navigate(`/domains/${created.id}`);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <section aria-labelledby="h-domains">
      <h1 id="h-domains">Sending domains</h1>
      {session.sending_ips_empty && <SendingIpsWarning />}
      <form class="card" onSubmit={add} aria-labelledby="h-add-domain">
        <h2 id="h-add-domain">Add a domain</h2>
        <div class="fields">
          <div>
            <label for="domain">Domain</label>
            <input id="domain" required value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="example.com" />
          </div>
        </div>
        <ErrorNote error={error} />
        <button type="submit">Add domain</button>
      </form>
      <ErrorNote error={domains.error} />
      <table>
        <caption class="visually-hidden">Sending domains, newest first</caption>
        <TableHead columns={["Domain", "Status", "Last checked"]} />
        <tbody>
          {domains.items.map((d) => (
            <tr key={d.id}>
              <td>
                <a {...link(`/domains/${d.id}`)}>{d.domain}</a>
              </td>
              <td>
                <span
                  class={`status ${d.sending_status === "verified" ? "successful" : d.sending_status === "grace" ? "delayed" : "rejected"}`}
                >
                  {STATUS_TEXT[d.sending_status]}
                </span>
              </td>
              <td>
                <Time iso={d.checked_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!domains.loading && domains.items.length === 0 && !domains.error && <p>No sending domains yet.</p>}
      <More list={domains} />
    </section>
  );
}

export function Domain({ session, id }: { session: Session; id: string }) {
  const path = accountPath(session.account_id, `sending_domains/${id}`);
  const [domain, setDomain] = useState<SendingDomain | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    get<SendingDomain>(path).then(setDomain, (err) =>
      err instanceof ApiFailure && err.status === 404 ? setDomain(null) : setError(String(err.message ?? err)),
    );
  }, [path]);
  if (domain === null) return <NotFound what="sending domain" />;
  if (domain === undefined) return <ErrorNote error={error} />;
  const verify = async () => {
    setBusy(true);
    setError(null);
    try {
      setDomain(await call<SendingDomain>("POST", `${path}/verify`));
    } catch (err) {
      // 422 carries the domain with each record's reason.
      if (err instanceof ApiFailure && err.status === 422) setDomain(await get<SendingDomain>(path));
      else setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!confirm(`Delete ${domain.domain}? Mail from it is refused from then on.`)) return;
    await call("DELETE", path).then(
      () => navigate("/domains"),
      (err) => setError(err.message),
    );
  };
  return (
    <section aria-labelledby="h-domain">
      <p>
        <a {...link("/domains")}>← Sending domains</a>
      </p>
      <h1 id="h-domain">{domain.domain}</h1>
      <p role="status">
        Status: <strong>{STATUS_TEXT[domain.sending_status]}</strong>
        {domain.grace_until && (
          <>
            {" "}
            — sending stops at <Time iso={domain.grace_until} /> unless the records check out again
          </>
        )}
        . Last checked <Time iso={domain.checked_at} />.
      </p>
      <ErrorNote error={error} />
      {session.sending_ips_empty && <SendingIpsWarning />}
      <h2>DNS records to publish</h2>
      <table>
        <TableHead columns={["Type", "Host", "Value", "Check"]} />
        <tbody>
          {domain.dns_records.map((r) => (
            <tr key={r.purpose}>
              <td>
                {r.type} <span class="tag">{r.purpose}</span>
                {!r.required && <span class="tag">optional</span>}
              </td>
              <td>
                <Host name={r.host} /> <CopyButton text={r.host} label={`Copy the host of the ${r.purpose} record`} />
              </td>
              <td>
                {r.type === "CNAME" ? <Host name={r.value} /> : <code class="wrap">{r.value}</code>}{" "}
                <CopyButton text={r.value} label={`Copy the value of the ${r.purpose} record`} />
              </td>
              <td>
                <span class={`status ${r.verified ? "successful" : "rejected"}`}>{r.verified ? "found" : "not found"}</span>
                {r.reason && <p class="hint">{r.reason}</p>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <DomainHealthView health={domain.health} />
      <div class="buttons">
        <button type="button" onClick={verify} disabled={busy}>
          Verify now
        </button>
        <button type="button" class="danger" onClick={remove}>
          Delete domain
        </button>
      </div>
    </section>
  );
}
