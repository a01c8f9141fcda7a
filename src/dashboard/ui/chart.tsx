// Stacked bars as SVG, drawn by us (no chart library): one bar per bucket, one colour per
// key, with a time axis along the bottom and a count axis up the side. The bars stretch to
// the width; the axes' labels are HTML around the SVG, so they keep their size on a phone as
// on a wide screen. Screen readers get the totals in the label and each bar's figures in its
// title (the axes are hidden from them: they repeat what the titles say).

export interface ChartBucket {
  at: string;
  counts: Record<string, number>;
}

const W = 720;
const H = 160;

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
  tick,
}: {
  title: string;
  keys: readonly string[];
  buckets: ChartBucket[];
  /** A bucket's time in words, for its bar's title. */
  label: (at: string) => string;
  /** The time label under bar `i` (`previous`: the bar before it), or null for none. */
  tick: (at: string, previous: string | null, i: number) => string | null;
}) {
  const top = roundTop(Math.max(0, ...buckets.map((b) => keys.reduce((n, k) => n + (b.counts[k] ?? 0), 0))));
  const step = W / Math.max(1, buckets.length);
  const bar = Math.max(1, step - 2);
  const counts = top >= 2 && top % 2 === 0 ? [0, top / 2, top] : [0, top];
  const pct = (n: number) => `${n.toFixed(3)}%`;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div class="plot">
        <ul class="y-axis" aria-hidden="true">
          {counts.map((n) => (
            <li key={n} style={{ top: pct(100 - (n / top) * 100) }}>
              {n}
            </li>
          ))}
        </ul>
        <svg
          viewBox={`0 0 ${W} ${H}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`${title}: ${keys.map((k) => `${k} ${buckets.reduce((n, b) => n + (b.counts[k] ?? 0), 0)}`).join(", ")}`}
        >
          {counts.map((n) => (
            <line key={n} x1={0} x2={W} y1={H - (n / top) * H} y2={H - (n / top) * H} vector-effect="non-scaling-stroke" />
          ))}
          {buckets.map((b, i) => {
            let y = H;
            return (
              <g key={b.at}>
                <title>{`${label(b.at)}: ${keys.map((k) => `${k} ${b.counts[k] ?? 0}`).join(", ")}`}</title>
                {keys.map((k, ki) => {
                  const h = ((b.counts[k] ?? 0) / top) * H;
                  y -= h;
                  return h > 0 ? <rect key={k} class={`c${ki}`} x={i * step + 1} y={y} width={bar} height={h} /> : null;
                })}
              </g>
            );
          })}
        </svg>
        <ul class="x-axis" aria-hidden="true">
          {buckets.map((b, i) => {
            const text = tick(b.at, buckets[i - 1]?.at ?? null, i);
            return text === null ? null : (
              <li key={b.at} style={{ left: pct((i / buckets.length) * 100) }}>
                {text}
              </li>
            );
          })}
        </ul>
      </div>
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
