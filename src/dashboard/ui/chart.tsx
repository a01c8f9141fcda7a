// Stacked bars as SVG, drawn by us (no chart library): one bar per bucket, one colour per
// key, a time axis along the bottom and a count axis up the side. The SVG keeps its aspect
// ratio so the labels are drawn at their size, not stretched with the bars. Screen readers
// get the totals in the label and each bar's figures in its title.

export interface ChartBucket {
  at: string;
  counts: Record<string, number>;
}

const W = 900;
const H = 170;
/** Room for the count labels on the left and the time labels below. */
const LEFT = 34;
const BOTTOM = 20;
const TOP = 8;

/** The smallest 1, 2 or 5 times a power of ten at or above `n`: a round top for the count axis. */
export function roundTop(n: number): number {
  if (n <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

export function StackedBars({
  title,
  keys,
  buckets,
  label,
  tickEvery,
  tickLabel,
}: {
  title: string;
  keys: readonly string[];
  buckets: ChartBucket[];
  /** A bucket's time in words, for its bar's title. */
  label: (at: string) => string;
  /** A time label under every `tickEvery`-th bar. */
  tickEvery: number;
  tickLabel: (at: string) => string;
}) {
  const top = roundTop(Math.max(0, ...buckets.map((b) => keys.reduce((n, k) => n + (b.counts[k] ?? 0), 0))));
  const plotW = W - LEFT;
  const plotH = H - TOP - BOTTOM;
  const step = plotW / Math.max(1, buckets.length);
  const bar = Math.max(1, step - 2);
  const yOf = (n: number) => TOP + plotH - (n / top) * plotH;
  const counts = top >= 2 && top % 2 === 0 ? [0, top / 2, top] : [0, top];
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${title}: ${keys.map((k) => `${k} ${buckets.reduce((n, b) => n + (b.counts[k] ?? 0), 0)}`).join(", ")}`}
      >
        <g class="y-axis">
          {counts.map((n) => (
            <g key={n}>
              <line x1={LEFT} x2={W} y1={yOf(n)} y2={yOf(n)} />
              <text x={LEFT - 6} y={yOf(n) + 4}>
                {n}
              </text>
            </g>
          ))}
        </g>
        <g class="x-axis">
          {buckets.map((b, i) =>
            i % tickEvery === 0 ? (
              <text key={b.at} x={LEFT + i * step + 1} y={H - 5}>
                {tickLabel(b.at)}
              </text>
            ) : null,
          )}
        </g>
        {buckets.map((b, i) => {
          let y = TOP + plotH;
          return (
            <g key={b.at}>
              <title>{`${label(b.at)}: ${keys.map((k) => `${k} ${b.counts[k] ?? 0}`).join(", ")}`}</title>
              {keys.map((k, ki) => {
                const h = ((b.counts[k] ?? 0) / top) * plotH;
                y -= h;
                return h > 0 ? <rect key={k} class={`c${ki}`} x={LEFT + i * step + 1} y={y} width={bar} height={h} /> : null;
              })}
            </g>
          );
        })}
      </svg>
      <ul class="legend">
        {keys.map((k, ki) => (
          <li key={k}>
            <span class={`swatch c${ki}`} aria-hidden="true" /> {k} {buckets.reduce((n, b) => n + (b.counts[k] ?? 0), 0)}
          </li>
        ))}
      </ul>
    </figure>
  );
}
