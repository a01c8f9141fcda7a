// The empty-sending_ips trap, shown where it bites (the overview, the sending domain
// pages): with outbound.sending_ips = [] no SPF record is offered, so no sending domain
// can ever verify; until now only the start-up log said so.
export function SendingIpsWarning() {
  return (
    <div class="card warnings" role="region" aria-label="Sending IPs missing">
      <h2>No sending domain can verify yet</h2>
      <p>
        <code>outbound.sending_ips</code> is empty in the config, so Postroom offers no SPF record for your sending domains and none can be
        verified. Set it to the public addresses this server sends from (or the ones your <code>outbound.smarthost</code> sends from), e.g.{" "}
        <code>sending_ips = ["203.0.113.5"]</code> under <code>[outbound]</code>, then reload Postroom (
        <code>systemctl reload postroom</code>). The SPF record then appears on each domain's page.
      </p>
    </div>
  );
}
