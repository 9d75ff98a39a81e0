/**
 * A big OSC (issue 27) shaped like gardenlet writes it: `files` files of ~3 KB text each, base64-encoded
 * inline (~4.1 KB of osc.yaml per file: 5,000 files make ~20 MB), under /etc/big-osc/<unit>/, spread over 10 units' filePaths.
 * `generation` changes every file's content.
 */
export function bigOscYaml(files: number, generation: number, units = 10): string {
  const lines = ["apiVersion: extensions.gardener.cloud/v1alpha1", "kind: OperatingSystemConfig", "spec:", "  units:"];
  for (let u = 0; u < units; u++) {
    lines.push(`  - name: big-osc-${u}.service`, `    content: "[Service]\\nExecStart=/bin/true\\n"`, "    filePaths:");
    for (let f = u; f < files; f += units) lines.push(`    - ${bigOscPath(f, units)}`);
  }
  lines.push("  files:");
  for (let f = 0; f < files; f++) {
    const data = Buffer.from(bigOscContent(f, generation)).toString("base64");
    lines.push(
      "  - content:",
      "      inline:",
      `        data: ${data}`,
      "        encoding: b64",
      `    path: ${bigOscPath(f, units)}`,
      "    permissions: 420",
    );
  }
  return `${lines.join("\n")}\n`;
}

export const bigOscPath = (f: number, units = 10) => `/etc/big-osc/${f % units}/file-${f}.conf`;

/** File `f`'s text in `generation`: 48 lines of 64 characters. */
export function bigOscContent(f: number, generation: number): string {
  const line = (i: number) => `g${generation} f${f} l${i} `.padEnd(63, String.fromCharCode(97 + ((f + i) % 26)));
  return `${Array.from({ length: 48 }, (_, i) => line(i)).join("\n")}\n`;
}
