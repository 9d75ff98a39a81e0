/**
 * Issue 25's targets as ratios to floors measured in the same `make bench` run: the README table between
 * the targets markers is rendered from bench/results/latest.json by bench/run.ts (figure, floor, ratio,
 * target, met?), so it always shows the figures of one run and never hand-copied ones.
 */

type Figures = Readonly<Record<string, number | string | boolean | null>>;
type Benches = Readonly<Record<string, Figures>>;

interface Target {
  readonly figure: string;
  /** bench and key of the measured figure; `base` the floor (or other figure) it is compared with. */
  readonly measured: readonly [string, string];
  readonly base: readonly [string, string];
  readonly unit: string;
  /** "ratio": measured / base ≤ limit; "plus": measured − base ≤ limit. */
  readonly rule: "ratio" | "plus";
  /** "report": a comparison shown for what it says, with no target of its own (the job floor's rows). */
  readonly limit: number | "report";
  /** What `base` is called in the target column (default "floor"). */
  readonly baseName?: string;
  /** Divides both figures for display (bytes → MiB). */
  readonly scale?: number;
}

const MiB = 1024 * 1024;

const targets: readonly Target[] = [
  {
    figure: "apply, 50 files / 10 units, p50 (/tmp)",
    measured: ["apply-latency", "apply_latency_ms_p50_50_files_10_units"],
    base: ["apply-latency", "floor_apply_ms_p50_50_files_10_units"],
    unit: "ms",
    rule: "ratio",
    limit: 1.3,
  },
  {
    figure: "apply, 1000 files, p50 (/tmp)",
    measured: ["apply-latency", "apply_latency_ms_p50_1000_files"],
    base: ["apply-latency", "floor_apply_ms_p50_1000_files"],
    unit: "ms",
    rule: "ratio",
    limit: 1.3,
  },
  {
    figure: "apply, 50 files / 10 units, p50 (fresh ext4)",
    measured: ["apply-latency", "apply_latency_ms_p50_50_files_10_units_fresh_ext4"],
    base: ["apply-latency", "floor_apply_ms_p50_50_files_10_units_fresh_ext4"],
    unit: "ms",
    rule: "ratio",
    limit: 1.3,
  },
  {
    figure: "apply, 1000 files, p50 (fresh ext4)",
    measured: ["apply-latency", "apply_latency_ms_p50_1000_files_fresh_ext4"],
    base: ["apply-latency", "floor_apply_ms_p50_1000_files_fresh_ext4"],
    unit: "ms",
    rule: "ratio",
    limit: 1.3,
  },
  {
    figure: "idle RSS after 60 s (floor: I/O floor's idle RSS)",
    measured: ["startup", "idle_rss_mb"],
    base: ["startup", "floor_io_idle_rss_mb"],
    unit: "MB",
    rule: "plus",
    limit: 2,
  },
  {
    figure: "fleet agent RSS, mean of 200 agents after an apply (compared with the idle RSS)",
    measured: ["fleet", "fleet_agent_rss_mb_mean"],
    base: ["startup", "idle_rss_mb"],
    baseName: "idle RSS",
    unit: "MB",
    rule: "plus",
    limit: 3,
  },
  {
    figure: "1000-file apply, peak RSS (/tmp; floor: I/O floor's idle RSS)",
    measured: ["apply-latency", "apply_peak_rss_mb_1000_files"],
    base: ["startup", "floor_io_idle_rss_mb"],
    unit: "MB",
    rule: "plus",
    limit: 30,
  },
  {
    figure: "1000-file apply, peak RSS (fresh ext4)",
    measured: ["apply-latency", "apply_peak_rss_mb_1000_files_fresh_ext4"],
    base: ["startup", "floor_io_idle_rss_mb"],
    unit: "MB",
    rule: "plus",
    limit: 30,
  },
  {
    figure: "start → /readyz 200, p50 (floor: I/O floor's)",
    measured: ["startup", "startup_to_ready_ms_p50"],
    base: ["startup", "floor_io_startup_ms_p50"],
    unit: "ms",
    rule: "plus",
    limit: 2,
  },
  {
    figure: "binary size (floor: hello world by the same Bun)",
    measured: ["startup", "binary_bytes"],
    base: ["startup", "floor_binary_bytes"],
    unit: "MiB",
    rule: "plus",
    limit: 6,
    scale: MiB,
  },
  {
    figure: "fleet rollout, 200 agents, P = 20, W = 5 s: Secret update → every Node has the checksum",
    measured: ["fleet-rollout", "rollout_seconds"],
    base: ["fleet-rollout", "rollout_ideal_seconds"],
    baseName: "ideal ⌈N/P⌉ × (apply p50 + W)",
    unit: "s",
    rule: "ratio",
    limit: 1.2,
  },
];

/**
 * Report-only rows (no target): the apply's job floor (bench/apply-job-floor.ts, the apply's whole job with
 * Bun's API and none of the agent's code) against the agent and against the syscall floor, so the table
 * shows how much of each apply gap any Bun program doing the job pays.
 */
const jobFloorRows = (): Target[] => {
  const rows: Target[] = [];
  const applies = [
    ["50 files / 10 units", "50_files_10_units"],
    ["1000 files", "1000_files"],
  ] as const;
  for (const [where, suffix] of [
    ["/tmp", ""],
    ["fresh ext4", "_fresh_ext4"],
  ] as const) {
    for (const [files, key] of applies) {
      const job = ["apply-latency", `floor_job_apply_ms_p50_${key}${suffix}`] as const;
      rows.push(
        {
          figure: `apply, ${files}, p50 (${where}): agent against the job floor`,
          measured: ["apply-latency", `apply_latency_ms_p50_${key}${suffix}`],
          base: job,
          baseName: "job floor",
          unit: "ms",
          rule: "ratio",
          limit: "report",
        },
        {
          figure: `apply, ${files}, p50 (${where}): job floor against the syscall floor`,
          measured: job,
          base: ["apply-latency", `floor_apply_ms_p50_${key}${suffix}`],
          unit: "ms",
          rule: "ratio",
          limit: "report",
        },
      );
    }
    const jobPeak = ["apply-latency", `floor_job_apply_peak_rss_mb_1000_files${suffix}`] as const;
    rows.push(
      {
        figure: `1000-file apply, peak RSS (${where}): agent against the job floor's peak`,
        measured: ["apply-latency", `apply_peak_rss_mb_1000_files${suffix}`],
        base: jobPeak,
        baseName: "job floor",
        unit: "MB",
        rule: "plus",
        limit: "report",
      },
      {
        figure: `1000-file apply, peak RSS (${where}): job floor's peak against the I/O floor's idle RSS`,
        measured: jobPeak,
        base: ["startup", "floor_io_idle_rss_mb"],
        unit: "MB",
        rule: "plus",
        limit: "report",
      },
    );
  }
  return rows;
};

/** Fixed limits (no floor): user data, the big OSC, the rollout's invariants, API requests per node-hour. */
interface Limit {
  readonly figure: string;
  readonly measured: readonly [string, string];
  readonly unit: string;
  readonly max: number;
  readonly target: string;
}

const limits: readonly Limit[] = [
  {
    figure: "node-init user data, gzip (RSA-3072 CA)",
    measured: ["user-data", "node_init_user_data_bytes"],
    unit: "bytes",
    max: 4096 - 300,
    target: "≤ 4,096 bytes with ≥ 300 bytes margin (≤ 3,796)",
  },
  {
    figure: "big OSC (20 MB, 5,000 files), first apply: peak RSS above idle, in OSC sizes",
    measured: ["big-osc", "big_osc_first_apply_osc_multiple"],
    unit: "×",
    max: 4,
    target: "≤ 4 × the OSC size (issue 27)",
  },
  {
    figure: "big OSC, re-apply (every file changed): peak RSS above idle, in OSC sizes",
    measured: ["big-osc", "big_osc_reapply_osc_multiple"],
    unit: "×",
    max: 4,
    target: "≤ 4 × the OSC size (issue 27)",
  },
  {
    figure: "fleet rollout: most nodes in slots at once (from every Lease change)",
    measured: ["fleet-rollout", "rollout_max_nodes_in_slots"],
    unit: "",
    max: 20,
    target: "≤ P (20)",
  },
  {
    figure: "fleet rollout: largest pool Lease object",
    measured: ["fleet-rollout", "rollout_lease_max_bytes"],
    unit: "bytes",
    max: 64 * 1024,
    target: "≤ 64 KB",
  },
  {
    figure: "API requests per node-hour",
    measured: ["api-requests", "api_requests_per_node_hour"],
    unit: "",
    max: 375,
    target: "≤ 375",
  },
];

const num = (benches: Benches, [bench, key]: readonly [string, string]): number | undefined => {
  const v = benches[bench]?.[key];
  return typeof v === "number" ? v : undefined;
};

const fmt = (x: number, unit: string): string => {
  const digits = unit === "" || unit === "bytes" ? 0 : x >= 100 && unit === "ms" ? 0 : 1;
  return `${x.toFixed(digits)}${unit === "" ? "" : ` ${unit}`}`;
};
const signed = (x: number, unit: string): string => (x < 0 ? `− ${fmt(-x, unit)}` : `+ ${fmt(x, unit)}`);

/** Load average (1 min) at the start and end of a bench, as run.ts records it, and DAMON pageout if it ran. */
const load = (benches: Benches, bench: string): string => {
  const a = benches[bench]?.["load_1m_start"];
  const b = benches[bench]?.["load_1m_end"];
  const pageout = benches[bench]?.["damon_pageout"] === true ? " (DAMON pageout on)" : "";
  return typeof a === "number" && typeof b === "number" ? `${a} → ${b}${pageout}` : "—";
};

/** The README table: one row per target, "not measured" where a key is missing (e.g. no root for ext4). */
export function targetsTable(benches: Benches): string {
  const rows = [...targets, ...jobFloorRows()].map((t) => {
    const m = num(benches, t.measured);
    const b = num(benches, t.base);
    const scale = t.scale ?? 1;
    const base = t.baseName ?? "floor";
    const limit = t.limit;
    const target = limit === "report" ? "report" : t.rule === "ratio" ? `≤ ${limit} × ${base}` : `≤ ${base} + ${limit} ${t.unit}`;
    if (m === undefined || b === undefined) return `| ${t.figure} | not measured | | | ${target} | — | — |`;
    const [ms, bs] = [m / scale, b / scale];
    const ratio = t.rule === "ratio" ? `${(m / b).toFixed(2)}` : signed(ms - bs, t.unit);
    const above = t.rule === "ratio" ? m / b : ms - bs;
    const met = limit === "report" ? "—" : above <= limit ? "met" : "**not met**";
    const loads = [...new Set([t.measured[0], t.base[0]])].map((x) => load(benches, x)).join("; ");
    return `| ${t.figure} | ${fmt(ms, t.unit)} | ${fmt(bs, t.unit)} | ${ratio} | ${target} | ${met} | ${loads} |`;
  });
  const fixed = limits.map((l) => {
    const m = num(benches, l.measured);
    if (m === undefined) return `| ${l.figure} | not measured | | | ${l.target} | — | — |`;
    return `| ${l.figure} | ${fmt(m, l.unit)} | — | — | ${l.target} | ${m <= l.max ? "met" : "**not met**"} | ${load(benches, l.measured[0])} |`;
  });
  return [
    "| figure | measured | floor | ratio / above floor | target | met? | load avg (1 min) start → end |",
    "|---|---|---|---|---|---|---|",
    ...rows,
    ...fixed,
  ].join("\n");
}
