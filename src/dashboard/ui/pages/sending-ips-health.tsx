// The admin view's sending IPs (System page): each address's PTR, whether it resolves
// back (FCrDNS) and is its EHLO name, the blocklists listing it and what to fix, as the
// last hourly check saw them (GET /api/v0.1/operator/health/sending has the same).
import { TableHead } from "../parts.tsx";

export interface SendingIpHealth {
  ip: string;
  helo: string;
  ptr: string | null;
  fcrdns: boolean | null;
  helo_matches: boolean | null;
  listed: { zone: string; text: string }[];
  unknown: { check: string; reason: string }[];
  checkedAtMs: number;
}

const yesNo = (v: boolean | null) =>
  v === null ? (
    <span class="status delayed">unknown</span>
  ) : (
    <span class={`status ${v ? "successful" : "rejected"}`}>{v ? "yes" : "no"}</span>
  );

export function SendingIpsHealth({ ips }: { ips: SendingIpHealth[] }) {
  return (
    <section aria-labelledby="h-sending-ips">
      <h2 id="h-sending-ips">Sending IPs</h2>
      {ips.length === 0 ? (
        <p>
          Not checked yet, or <code>outbound.sending_ips</code> is empty.
        </p>
      ) : (
        <table>
          <TableHead columns={["Address", "PTR", "Resolves back", "PTR is EHLO name", "Blocklists"]} />
          <tbody>
            {ips.map((h) => (
              <tr key={h.ip}>
                <td>
                  <code>{h.ip}</code>
                  <p class="hint">EHLO {h.helo}</p>
                </td>
                <td>{h.ptr ?? <span class="status rejected">none</span>}</td>
                <td>{yesNo(h.fcrdns)}</td>
                <td>{yesNo(h.helo_matches)}</td>
                <td>
                  {h.listed.length === 0 ? (
                    <span class="status successful">not listed</span>
                  ) : (
                    h.listed.map((l) => (
                      <p key={l.zone}>
                        <span class="status rejected">{l.zone}</span> {l.text}
                      </p>
                    ))
                  )}
                  {h.unknown.map((u) => (
                    <p key={u.check} class="hint">
                      {u.check}: unknown ({u.reason})
                    </p>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
