// Stacked bars as SVG, drawn by us (no chart library): one bar per bucket, one colour per
// key. Screen readers get the same numbers as a table.

export interface ChartBucket {
  at: string;
  counts: Record<string, number>;
}

const W = 720;
const H = 160;

export function StackedBars({
  title,
  keys,
  buckets,
  label,
}: {
  title: string;
  keys: readonly string[];
  buckets: ChartBucket[];
  label: (at: string) => string;
}) {
  const max = Math.max(1, ...buckets.map((b) => keys.reduce((n, k) => n + (b.counts[k] ?? 0), 0)));
  const step = W / Math.max(1, buckets.length);
  const bar = Math.max(1, step - 2);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${title}: ${keys.map((k) => `${k} ${buckets.reduce((n, b) => n + (b.counts[k] ?? 0), 0)}`).join(", ")}`}
        preserveAspectRatio="none"
      >
        {buckets.map((b, i) => {
          let y = H;
          return (
            <g key={b.at}>
              <title>{`${label(b.at)}: ${keys.map((k) => `${k} ${b.counts[k] ?? 0}`).join(", ")}`}</title>
              {keys.map((k, ki) => {
                const h = ((b.counts[k] ?? 0) / max) * (H - 4);
                y -= h;
                return h > 0 ? <rect key={k} class={`c${ki}`} x={i * step + 1} y={y} width={bar} height={h} /> : null;
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
