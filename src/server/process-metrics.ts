import type { Collector, MetricFamily } from "./metrics.ts";

const gauge = (name: string, help: string, value: number): MetricFamily => ({
  name,
  help,
  type: "gauge",
  samples: [{ labels: {}, value }],
});

const countOpenFds = async (): Promise<number | undefined> => {
  const { readdir } = await import("node:fs/promises");
  try {
    return (await readdir("/proc/self/fd")).length;
  } catch (err) {
    // Without /proc (not Linux) the metric is simply left out.
    if (err instanceof Error) return undefined;
    throw err;
  }
};

/** The standard `process_*` metrics of Prometheus client libraries, computed at scrape time. */
export const processCollector: Collector = async () => {
  const cpu = process.cpuUsage();
  const families: MetricFamily[] = [
    {
      name: "process_cpu_seconds_total",
      help: "Total user and system CPU time spent in seconds.",
      type: "counter",
      samples: [{ labels: {}, value: (cpu.user + cpu.system) / 1e6 }],
    },
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", process.memoryUsage.rss()),
    gauge(
      "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.",
      Math.floor(performance.timeOrigin / 1000),
    ),
  ];
  const fds = await countOpenFds();
  if (fds !== undefined) families.push(gauge("process_open_fds", "Number of open file descriptors.", fds));
  return families;
};

/** `gardener_node_agent_build_info{version,revision} 1`. */
export const buildInfoCollector =
  (version: string, revision: string): Collector =>
  () => [
    {
      name: "gardener_node_agent_build_info",
      help: "Build information of gardener-node-agent.",
      type: "gauge",
      samples: [{ labels: { version, revision }, value: 1 }],
    },
  ];
