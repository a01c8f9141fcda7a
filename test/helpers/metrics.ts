// Reads the Prometheus text of /metrics: a series' value by its name and labels (in any
// order), and the metric families the scrape declares. Over the real HTTP listener.

export interface Scrape {
  text: string;
  /** The value of one series, or undefined when the scrape has none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum of every series of `name` whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
  /** The metric families (from the # TYPE lines), with their types. */
  families: Map<string, string>;
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

const keyOf = (name: string, labels: Record<string, string>) =>
  name + JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

export function parseMetrics(text: string): Scrape {
  const series = new Map<string, { name: string; labels: Record<string, string>; value: number }>();
  const families = new Map<string, string>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1]!, type[2]!);
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(LABEL)) labels[k!] = v!;
    series.set(keyOf(m[1]!, labels), { name: m[1]!, labels, value: Number(m[3]!) });
  }
  return {
    text,
    families,
    value: (name, labels = {}) => series.get(keyOf(name, labels))?.value,
    sum: (name, labels = {}) =>
      [...series.values()]
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((n, s) => n + s.value, 0),
  };
}

/** GET /metrics on the appliance's HTTP port with the metrics token. */
export async function scrapeMetrics(httpPort: number, token: string): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}
