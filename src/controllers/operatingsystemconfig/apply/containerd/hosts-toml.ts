import type { RegistryConfig } from "../../../../osc/index.ts";

const named: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\\": "\\\\",
  '"': '\\"',
};

/** Go's %q for a string: double quotes, backslash escapes, non-printable ASCII as \xNN. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const esc = named[ch];
    if (esc !== undefined) out += esc;
    else {
      const c = ch.codePointAt(0) as number;
      if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
      else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, "0")}`;
      else out += ch;
    }
  }
  return `${out}"`;
}

/** Go's json.Marshal of a string list (HTML-safe escaping, no spaces). */
function goJsonList(xs: readonly string[]): string {
  return JSON.stringify(xs)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Exact bytes of /etc/containerd/certs.d/<upstream>/hosts.toml (§7.4). */
export function hostsToml(r: RegistryConfig): string {
  let out = "# managed by gardener-node-agent";
  if (r.server !== undefined && r.server !== "") out += `\nserver = ${goQuote(r.server)}\n`;
  for (const h of r.hosts ?? []) {
    const caps = h.capabilities !== undefined && h.capabilities.length > 0 ? h.capabilities : ["pull", "resolve"];
    out += `\n[host.${goQuote(h.url)}]\n  capabilities = ${goJsonList(caps)}`;
    if (h.caCerts !== undefined && h.caCerts.length > 0) out += `\n  ca = ${goJsonList(h.caCerts)}`;
    if (h.overridePath === true) out += "\n  override_path = true";
    out += "\n";
  }
  return `${out}\n`;
}
