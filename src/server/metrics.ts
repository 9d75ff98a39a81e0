/**
 * A small Prometheus registry (text exposition format 0.0.4). Modules register counters, gauges and
 * histograms on the registry the CLI creates and passes down; collectors add values computed at
 * scrape time.
 */

export type Labels = Readonly<Record<string, string>>;
export type MetricType = "counter" | "gauge" | "histogram";

export interface Sample {
  /** Suffix after the family name (`_bucket`, `_sum`, `_count`), usually "". */
  readonly suffix?: string;
  readonly labels: Labels;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly samples: readonly Sample[];
}

export interface MetricOptions {
  readonly name: string;
  readonly help: string;
}

export interface Counter {
  inc(labels?: Labels, by?: number): void;
}

export interface Gauge {
  set(value: number, labels?: Labels): void;
  inc(labels?: Labels, by?: number): void;
  dec(labels?: Labels, by?: number): void;
}

export interface Histogram {
  observe(value: number, labels?: Labels): void;
}

export type Collector = () => MetricFamily[] | Promise<MetricFamily[]>;

export interface MetricsRegistry {
  counter(o: MetricOptions): Counter;
  gauge(o: MetricOptions): Gauge;
  /** Upper bounds in ascending order; +Inf is added. */
  histogram(o: MetricOptions & { readonly buckets: readonly number[] }): Histogram;
  addCollector(c: Collector): void;
  /** The scrape body. */
  render(): Promise<string>;
}

export class DuplicateMetricError extends Error {
  override readonly name = "DuplicateMetricError";
  constructor(readonly metric: string) {
    super(`metric ${metric} is already registered`);
  }
}

const labelKey = (labels: Labels): string =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );

const escapeLabel = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

const formatValue = (v: number): string => {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
};

const formatLabels = (labels: Labels): string => {
  const keys = Object.keys(labels);
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${k}="${escapeLabel(labels[k] ?? "")}"`).join(",")}}`;
};

/** The text exposition of metric families. */
const renderFamilies = (families: readonly MetricFamily[]): string => {
  let out = "";
  for (const f of families) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) out += `${f.name}${s.suffix ?? ""}${formatLabels(s.labels)} ${formatValue(s.value)}\n`;
  }
  return out;
};

interface Series<T> {
  labels: Labels;
  state: T;
}

export const createMetricsRegistry = (): MetricsRegistry => {
  const families = new Map<string, () => MetricFamily>();
  const collectors: Collector[] = [];

  const register = <T>(o: MetricOptions, type: MetricType, init: () => T, samples: (s: Series<T>) => Sample[]) => {
    if (families.has(o.name)) throw new DuplicateMetricError(o.name);
    const series = new Map<string, Series<T>>();
    const get = (labels: Labels = {}): Series<T> => {
      const key = labelKey(labels);
      let s = series.get(key);
      if (s === undefined) {
        s = { labels: { ...labels }, state: init() };
        series.set(key, s);
      }
      return s;
    };
    families.set(o.name, () => ({ name: o.name, help: o.help, type, samples: [...series.values()].flatMap(samples) }));
    return get;
  };

  return {
    counter(o) {
      const get = register(
        o,
        "counter",
        () => ({ v: 0 }),
        (s) => [{ labels: s.labels, value: s.state.v }],
      );
      return { inc: (labels, by = 1) => void (get(labels).state.v += by) };
    },
    gauge(o) {
      const get = register(
        o,
        "gauge",
        () => ({ v: 0 }),
        (s) => [{ labels: s.labels, value: s.state.v }],
      );
      return {
        set: (value, labels) => void (get(labels).state.v = value),
        inc: (labels, by = 1) => void (get(labels).state.v += by),
        dec: (labels, by = 1) => void (get(labels).state.v -= by),
      };
    },
    histogram(o) {
      const bounds = [...o.buckets];
      const get = register(
        o,
        "histogram",
        () => ({ counts: bounds.map(() => 0), sum: 0, count: 0 }),
        (s) => [
          ...bounds.map((le, i) => ({ suffix: "_bucket", labels: { ...s.labels, le: formatValue(le) }, value: s.state.counts[i] ?? 0 })),
          { suffix: "_bucket", labels: { ...s.labels, le: "+Inf" }, value: s.state.count },
          { suffix: "_sum", labels: s.labels, value: s.state.sum },
          { suffix: "_count", labels: s.labels, value: s.state.count },
        ],
      );
      return {
        observe(value, labels) {
          const st = get(labels).state;
          bounds.forEach((le, i) => {
            if (value <= le) st.counts[i] = (st.counts[i] ?? 0) + 1;
          });
          st.sum += value;
          st.count += 1;
        },
      };
    },
    addCollector(c) {
      collectors.push(c);
    },
    async render() {
      const collected = (await Promise.all(collectors.map((c) => c()))).flat();
      return renderFamilies([...[...families.values()].map((f) => f()), ...collected]);
    },
  };
};
