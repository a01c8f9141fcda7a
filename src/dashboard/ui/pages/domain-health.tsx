// A sending domain's deliverability health on its page: the DMARC policy receivers apply,
// whether our DKIM signature and the return path align with the domain, each with what it
// means and what to publish to fix it (the API's `health`, refreshed by "Verify now").

export interface DomainHealth {
  dmarc: "missing" | "none" | "quarantine" | "reject";
  dmarc_record: string | null;
  dkim_aligned: boolean;
  return_path_aligned: boolean;
  fix: { dmarc: string | null; dkim_aligned: string | null; return_path_aligned: string | null };
  unknown: string | null;
}

const DMARC_MEANS: Record<DomainHealth["dmarc"], string> = {
  missing: "No DMARC record: Gmail and Yahoo refuse bulk mail from domains without one, and anyone can send as this domain.",
  none: "p=none: receivers report on mail that fails DMARC but deliver it anyway; a first step, not protection.",
  quarantine: "p=quarantine: mail that fails DMARC goes to spam.",
  reject: "p=reject: mail that fails DMARC is refused; the strongest protection.",
};

function Point({ title, ok, means, fix }: { title: string; ok: boolean; means: string; fix: string | null }) {
  return (
    <tr>
      <td>{title}</td>
      <td>
        <span class={`status ${ok ? "successful" : "rejected"}`}>{ok ? "good" : "needs a look"}</span>
      </td>
      <td>
        <p>{means}</p>
        {fix && <p class="hint">To fix: {fix}</p>}
      </td>
    </tr>
  );
}

export function DomainHealthView({ health }: { health: DomainHealth | null }) {
  if (!health)
    return (
      <section aria-labelledby="h-health">
        <h2 id="h-health">Deliverability</h2>
        <p>Not checked yet: "Verify now" checks DMARC and alignment along with the records.</p>
      </section>
    );
  const enforced = health.dmarc === "quarantine" || health.dmarc === "reject";
  return (
    <section aria-labelledby="h-health">
      <h2 id="h-health">Deliverability</h2>
      {health.unknown && <p class="hint">{health.unknown}</p>}
      <table>
        <thead>
          <tr>
            <th scope="col">Point</th>
            <th scope="col">State</th>
            <th scope="col">What it means</th>
          </tr>
        </thead>
        <tbody>
          <Point
            title={`DMARC: ${health.dmarc}`}
            ok={enforced}
            means={`${DMARC_MEANS[health.dmarc]}${health.dmarc_record ? ` Record: ${health.dmarc_record}` : ""}`}
            fix={health.fix.dmarc}
          />
          <Point
            title="DKIM aligned"
            ok={health.dkim_aligned}
            means="Our signature names this domain (d=), so DMARC passes on DKIM once receivers find the key."
            fix={health.fix.dkim_aligned}
          />
          <Point
            title="Return path aligned"
            ok={health.return_path_aligned}
            means="Bounces go to an address under this domain (its mta_domain), so SPF passes for it and counts for DMARC too."
            fix={health.fix.return_path_aligned}
          />
        </tbody>
      </table>
    </section>
  );
}
