// The admin view's System page: version, health checks and warnings, the certificate, the
// queue and the webhook backlog of the whole appliance, and the destinations paused now and
// why (GET /dashboard/system).
import { useEffect, useState } from "preact/hooks";
import { ApiFailure, get } from "../api.ts";
import { ErrorNote, TableHead } from "../parts.tsx";
import { type SendingIpHealth, SendingIpsHealth } from "./sending-ips-health.tsx";

interface SystemInfo {
  version: string;
  health: { ok: boolean; checks: Record<string, string>; warnings: string[] };
  tls: { mode: string; certificate: { names: string[]; issuer: string; notAfterMs: number } | null; problem: string | null };
  queue: { due: number; scheduled: number; held: number };
  webhook_events_pending: number;
  sending_ips: SendingIpHealth[];
  /** Destinations paused now (a throttle reply or an operator), on every node. */
  paused_destinations: { destination: string; source: string; reason: string; paused_at: string; until: string | null }[];
}

export function System() {
  const [info, setInfo] = useState<SystemInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<SystemInfo>("/dashboard/system").then(setInfo, (err) => setError(err instanceof ApiFailure ? err.message : String(err)));
  }, []);
  return (
    <section aria-labelledby="h-system">
      <h1 id="h-system">System</h1>
      <ErrorNote error={error} />
      {info && (
        <>
          <dl class="facts">
            <dt>Version</dt>
            <dd>{info.version}</dd>
            <dt>Health</dt>
            <dd>
              <span class={`status ${info.health.ok ? "successful" : "rejected"}`}>{info.health.ok ? "ok" : "failing"}</span>
            </dd>
            <dt>Certificate</dt>
            <dd>
              {info.tls.certificate
                ? `${info.tls.certificate.names.join(", ")} from ${info.tls.certificate.issuer}, valid until ${new Date(info.tls.certificate.notAfterMs).toLocaleString()}`
                : `none (tls.mode ${info.tls.mode})${info.tls.problem ? `: ${info.tls.problem}` : ""}`}
            </dd>
            <dt>Queue</dt>
            <dd>
              {info.queue.due} due now, {info.queue.scheduled} scheduled for a retry or later sending, {info.queue.held} held by an operator
            </dd>
            <dt>Webhook events waiting</dt>
            <dd>{info.webhook_events_pending}</dd>
          </dl>
          <h2>Checks</h2>
          <table>
            <TableHead columns={["Check", "Result"]} />
            <tbody>
              {Object.entries(info.health.checks).map(([name, result]) => (
                <tr key={name}>
                  <td>{name}</td>
                  <td>
                    <span class={`status ${result === "ok" ? "successful" : "rejected"}`}>{result}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Paused destinations</h2>
          {info.paused_destinations.length === 0 ? (
            <p>None: every destination gets its mail.</p>
          ) : (
            <table>
              <TableHead columns={["Destination", "Paused by", "Why", "Since", "Until"]} />
              <tbody>
                {info.paused_destinations.map((p) => (
                  <tr key={p.destination}>
                    <td>{p.destination}</td>
                    <td>{p.source === "throttle" ? "a throttle reply" : "an operator"}</td>
                    <td>{p.reason}</td>
                    <td>{new Date(p.paused_at).toLocaleString()}</td>
                    <td>{p.until ? new Date(p.until).toLocaleString() : "resumed by an operator"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {info.health.warnings.length > 0 && (
            <div class="card warnings" role="region" aria-label="Warnings">
              <ul>
                {info.health.warnings.map((w) => (
                  <li key={w}>{w}</li>
                ))}
              </ul>
            </div>
          )}
          <SendingIpsHealth ips={info.sending_ips} />
        </>
      )}
    </section>
  );
}
