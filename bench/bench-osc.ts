/**
 * The OSC the apply benches update (apply-latency, restart-lease, apply-peak-ab, runtime-settings-ab):
 * `files` inline files spread over `units` units and their directories, every file's content naming
 * `generation`, so each update rewrites every file and restarts every unit.
 */
export function benchOscYaml(files: number, generation: number, units = 10): string {
  const lines = ["apiVersion: extensions.gardener.cloud/v1alpha1", "kind: OperatingSystemConfig", "spec:", "  units:"];
  for (let u = 0; u < units; u++) {
    lines.push(`  - name: bench-${u}.service`, `    content: "[Service]\\nExecStart=/bin/true\\n"`, "    filePaths:");
    for (let f = u; f < files; f += units) lines.push(`    - /etc/bench/${u}/file-${f}.conf`);
  }
  lines.push("  files:");
  for (let f = 0; f < files; f++) {
    lines.push(
      `  - path: /etc/bench/${f % units}/file-${f}.conf`,
      "    permissions: 420",
      `    content: {inline: {data: "generation ${generation} file ${f}\\n"}}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
