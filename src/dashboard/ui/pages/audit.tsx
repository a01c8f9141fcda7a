// The admin view's Audit page: what operators did to accounts, newest first (GET
// /api/v0.1/operator/audit): who (the operator token's label), what, when, which account.
import { Time, ErrorNote, More, TableHead } from "../parts.tsx";
import { useList } from "../use-list.ts";

interface Entry {
  id: string;
  created_at: string;
  operator: string;
  action: string;
  account_id: string;
  details: Record<string, unknown>;
}

export function Audit() {
  const list = useList<Entry>("/api/v0.1/operator/audit");
  return (
    <section aria-labelledby="h-audit">
      <h1 id="h-audit">Audit log</h1>
      <ErrorNote error={list.error} />
      <table>
        <caption class="visually-hidden">Operator actions, newest first</caption>
        <TableHead columns={["When", "Operator", "Action", "Account", "Details"]} />
        <tbody>
          {list.items.map((e) => (
            <tr key={e.id}>
              <td>
                <Time iso={e.created_at} />
              </td>
              <td>
                <code>{e.operator}</code>
              </td>
              <td>{e.action}</td>
              <td>
                <code>{e.account_id}</code>
              </td>
              <td>
                <code>{JSON.stringify(e.details)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!list.loading && list.items.length === 0 && !list.error && <p>No operator action yet.</p>}
      <More list={list} />
    </section>
  );
}
