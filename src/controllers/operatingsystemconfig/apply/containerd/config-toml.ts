import { parse, stringify, TomlDate, type TomlTable } from "smol-toml";
import type { CriConfig, PluginConfig } from "../../../../osc/index.ts";
import { ContainerdConfigError } from "./errors.ts";

export const certsDir = "/etc/containerd/certs.d";
const confDImport = "/etc/containerd/conf.d/*.toml";
const cniBinDir = "/opt/cni/bin";

const grpcCri = "io.containerd.grpc.v1.cri";
const criImages = "io.containerd.cri.v1.images";
const criRuntime = "io.containerd.cri.v1.runtime";

/** Marks a removed key: upstream keeps it as null until serialising, so a later path through it fails. */
const removed: unique symbol = Symbol("removed");
type Doc = Record<string, unknown>;

const isTable = (x: unknown): x is Doc =>
  typeof x === "object" && x !== null && !Array.isArray(x) && !(x instanceof Date) && !(x instanceof TomlDate);

/** Table at `path`, created as needed; anything else in the way is an error. */
function tableAt(doc: Doc, path: readonly string[]): Doc {
  let cur = doc;
  for (let i = 0; i < path.length; i++) {
    const k = path[i] as string;
    const next = cur[k];
    if (next === undefined) {
      const t: Doc = {};
      cur[k] = t;
      cur = t;
    } else if (isTable(next)) {
      cur = next;
    } else {
      throw new ContainerdConfigError(`value at path ${JSON.stringify(path.slice(0, i + 1))} is not a table`);
    }
  }
  return cur;
}

function setAt(doc: Doc, path: readonly string[], value: unknown): void {
  tableAt(doc, path.slice(0, -1))[path[path.length - 1] as string] = value;
}

/** Marks the key removed; missing parents are not created, a non-table parent is an error. */
function deleteAt(doc: Doc, path: readonly string[]): void {
  let cur = doc;
  for (let i = 0; i < path.length - 1; i++) {
    const next = cur[path[i] as string];
    if (next === undefined) return;
    if (!isTable(next)) throw new ContainerdConfigError(`value at path ${JSON.stringify(path.slice(0, i + 1))} is not a table`);
    cur = next;
  }
  cur[path[path.length - 1] as string] = removed;
}

/** Parses "containerd github.com/containerd/containerd/v2 v2.2.0 sha" (or a bare "2.2.0") → [major, minor]. */
export function parseContainerdVersion(text: string): [number, number] {
  const m = /(?:^|\s)v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+~.\w]*)?(?:\s|$)/.exec(text.trim());
  if (m === null) throw new ContainerdConfigError(`cannot parse containerd version from ${JSON.stringify(text.trim())}`);
  return [Number(m[1]), Number(m[2])];
}

/** Top-level `version` (absent → 1); integer 1–4 or an error. */
export function configVersion(doc: Doc): number {
  const v = doc["version"];
  if (v === undefined) return 1;
  const n = typeof v === "bigint" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 4) {
    throw new ContainerdConfigError(`unsupported containerd config version ${JSON.stringify(String(v))}`);
  }
  return n;
}

function applyPlugin(doc: Doc, p: PluginConfig, version: number): void {
  let path = ["plugins", ...p.path];
  if (version >= 3 && path[1] === grpcCri && path[2] === "containerd" && path[3] === "runtimes") {
    path = ["plugins", criRuntime, ...path.slice(2)];
  }
  const op = p.op ?? "add";
  if (op === "remove") {
    deleteAt(doc, path);
    return;
  }
  if (op !== "add") throw new ContainerdConfigError(`unknown plugin op "${op}" for path ${JSON.stringify(p.path)}`);
  const t = tableAt(doc, path);
  for (const [k, v] of Object.entries(p.values ?? {})) t[k] = stripNulls(v);
}

/** TOML has no null; JSON nulls in plugin values are dropped. */
function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== null).map(stripNulls);
  if (isTable(v))
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, stripNulls(x)]),
    );
  return v;
}

function dropRemoved(t: Doc): void {
  for (const [k, v] of Object.entries(t)) {
    if (v === removed) delete t[k];
    else if (isTable(v)) dropRemoved(v);
  }
}

/**
 * Patches containerd's config.toml (§7.2) for `criConfig` and the running containerd version
 * `[major, minor]`; returns the new TOML text.
 */
export function patchContainerdConfig(text: string, cri: CriConfig, containerdVersion: readonly [number, number]): string {
  let doc: Doc;
  try {
    doc = parse(text) as TomlTable as Doc;
  } catch {
    // Not kept as cause: the parser's message quotes the offending line (errorText would repeat it).
    throw new ContainerdConfigError("failed to parse containerd config");
  }
  const version = configVersion(doc);
  const modern = version >= 3;
  const cd = cri.containerd;
  const newCni = modern && (containerdVersion[0] > 2 || (containerdVersion[0] === 2 && containerdVersion[1] >= 2));

  setAt(doc, ["plugins", modern ? criImages : grpcCri, "registry", "config_path"], certsDir);
  const imports = doc["imports"];
  if (Array.isArray(imports)) {
    if (!imports.includes(confDImport)) imports.push(confDImport);
  } else {
    doc["imports"] = [confDImport];
  }
  if (modern) setAt(doc, ["plugins", criImages, "pinned_images", "sandbox"], cd?.sandboxImage ?? "");
  else setAt(doc, ["plugins", grpcCri, "sandbox_image"], cd?.sandboxImage ?? "");
  if (newCni) {
    setAt(doc, ["plugins", criRuntime, "cni", "bin_dirs"], [cniBinDir]);
    deleteAt(doc, ["plugins", criRuntime, "cni", "bin_dir"]);
  } else {
    setAt(doc, ["plugins", modern ? criRuntime : grpcCri, "cni", "bin_dir"], cniBinDir);
  }
  if (cri.cgroupDriver !== undefined) {
    setAt(
      doc,
      ["plugins", modern ? criRuntime : grpcCri, "containerd", "runtimes", "runc", "options", "SystemdCgroup"],
      cri.cgroupDriver === "systemd",
    );
  }
  for (const p of cd?.plugins ?? []) applyPlugin(doc, p, version);
  dropRemoved(doc);
  return stringify(doc);
}
