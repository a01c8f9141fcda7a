// The getting-started checklist of a fresh overview: the four steps of a first hour, each a
// link to where it is done, each ticked from the account's real state (its addresses, their
// incoming statuses, its sending domains, its sent messages). Gone once every step is done.
import { useEffect, useState } from "preact/hooks";
import { accountPath, get, type Session } from "../api.ts";
import { link } from "../router.ts";

interface Progress {
  address: { email: string } | null;
  received: boolean;
  /** The first sending domain, and whether one is verified. */
  domain: { id: string; verified: boolean } | null;
  sent: boolean;
}

/** How many addresses are looked at for a received message: enough for a first hour, cheap on a large account. */
const ADDRESSES_LOOKED_AT = 10;

async function progressOf(session: Session): Promise<Progress> {
  const at = (rest: string) => accountPath(session.account_id, rest);
  const [addresses, domains, sent] = await Promise.all([
    get<{ id: string; email: string }[]>(at("addresses")),
    get<{ id: string; sending_status: string }[]>(at("sending_domains")),
    Promise.all(
      session.outbound_account_ids.map((id) =>
        get<unknown[]>(at(`outbound_messages?outbound_account_id=${encodeURIComponent(id)}`)).catch(() => []),
      ),
    ),
  ]);
  const statuses = await Promise.all(
    addresses
      .slice(0, ADDRESSES_LOOKED_AT)
      .map((a) => get<unknown[]>(at(`incoming_statuses?address_id=${encodeURIComponent(a.id)}`)).catch(() => [])),
  );
  const verified = domains.find((d) => d.sending_status !== "unverified");
  const domain = verified ?? domains[0];
  return {
    address: addresses[0] ?? null,
    received: statuses.some((s) => s.length > 0),
    domain: domain ? { id: domain.id, verified: verified !== undefined } : null,
    sent: sent.some((m) => m.length > 0),
  };
}

export function GettingStarted({ session }: { session: Session }) {
  const [progress, setProgress] = useState<Progress | null>(null);
  useEffect(() => {
    progressOf(session).then(setProgress, () => setProgress(null));
  }, [session.account_id]);
  if (!progress) return null;
  const { address, received, domain, sent } = progress;
  if (address && received && domain?.verified && sent) return null;
  const { inbound_host, inbound_port } = session.smtp;
  const steps: { done: boolean; path: string; name: string; how: preact.ComponentChildren }[] = [
    {
      done: address !== null,
      path: "/addresses",
      name: "Create an address",
      how: "an email address whose mail is posted to your URL (the target).",
    },
    {
      done: received,
      path: "/incoming",
      name: "Send a message in",
      how:
        address && inbound_port ? (
          <>
            for example <code class="wrap">{`swaks --server ${inbound_host}:${inbound_port} --to ${address.email}`}</code>; it shows under
            Incoming with your target's answer.
          </>
        ) : (
          "to one of your addresses from any mail program; it shows under Incoming with your target's answer."
        ),
    },
    {
      done: domain?.verified ?? false,
      path: domain ? `/domains/${domain.id}` : "/domains",
      name: "Add a sending domain",
      how: `${domain ? "and publish its DNS records, then press Verify now." : "and publish the DNS records it lists."}${
        session.sending_ips_empty ? " No domain can verify until outbound.sending_ips is set (see above)." : ""
      }`,
    },
    {
      done: sent,
      path: "/smtp",
      name: "Send a first message in test mode",
      how: 'with "test_mode": true in the API call: it is validated and recorded, never sent.',
    },
  ];
  return (
    <div class="card checklist" role="region" aria-labelledby="h-start">
      <h2 id="h-start">Getting started</h2>
      <ol>
        {steps.map((s) => (
          <li key={s.name} class={s.done ? "done" : "todo"}>
            <span class="tick" aria-hidden="true">
              {s.done ? "✓" : ""}
            </span>
            <span>
              <a {...link(s.path)}>{s.name}</a> {s.how}{" "}
              <span class={`status ${s.done ? "successful" : "delayed"}`}>{s.done ? "done" : "to do"}</span>
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}
