// Calls to the Postroom API from the dashboard: the session cookie authenticates them
// (same origin), and every call carries the dashboard header the server requires of
// writes (CSRF). Errors come back as {status, error} and are thrown as ApiFailure.

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What to tell the user about a failed call. */
export const errorText = (err: unknown): string => (err instanceof ApiFailure ? err.message : String(err));

/** Called when the session has ended (401): the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export const whenSignedOut = (fn: () => void) => {
  onSignedOut = fn;
};

async function request<T>(method: string, path: string, body?: unknown): Promise<{ data: T; res: Response }> {
  const headers: Record<string, string> = { "X-Postroom-Dashboard": "1", Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? null : JSON.stringify(body) });
  if (res.status === 204) return { data: undefined as T, res };
  const data = (await res.json().catch(() => null)) as { error?: string } | null;
  if (!res.ok) {
    if (res.status === 401 && path !== "/dashboard/session") onSignedOut();
    throw new ApiFailure(res.status, data?.error ?? `HTTP ${res.status}`);
  }
  return { data: data as T, res };
}

export const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await request<T>(method, path, body)).data;

/** A page of a list and the path of the next one (the Link header's rel="next"), if any. */
export async function list<T>(path: string): Promise<{ items: T[]; next: string | null }> {
  const { data, res } = await request<T[]>("GET", path);
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "");
  return { items: data, next: next ? next[1]! : null };
}

export const get = <T>(path: string) => call<T>("GET", path);

/** The account API's base path for the signed-in account. */
export const accountPath = (accountId: string, rest: string) => `/api/v0.1/${encodeURIComponent(accountId)}/${rest}`;

/** GET /dashboard/session: the accounts the session may open (every one for an admin). */
export interface ServerSession {
  admin: boolean;
  accounts: { id: string; name: string; outbound_account_ids: string[] }[];
  expires_at: string;
  smtp: {
    host: string;
    submission_port: number | null;
    submission_tls_port: number | null;
    starttls: boolean;
    allow_insecure_auth: boolean;
    inbound_port: number | null;
    inbound_host: string;
  };
  /** outbound.sending_ips is empty: no SPF record, no sending domain can verify. */
  sending_ips_empty: boolean;
}

/** The session as the pages see it: the account shown now. */
export interface Session extends ServerSession {
  account_id: string;
  account_name: string;
  outbound_account_ids: string[];
}

const CHOSEN_KEY = "postroom-account";

/** The account to show: the one chosen before in this tab if the session may still open it, else the first. */
export function sessionView(s: ServerSession, chosen: string | null = sessionStorage.getItem(CHOSEN_KEY)): Session | null {
  const a = s.accounts.find((x) => x.id === chosen) ?? s.accounts[0];
  if (!a) return null;
  return { ...s, account_id: a.id, account_name: a.name, outbound_account_ids: a.outbound_account_ids };
}

export function chooseAccount(id: string): void {
  sessionStorage.setItem(CHOSEN_KEY, id);
}
