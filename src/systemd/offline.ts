import type { HostFs } from "../host/index.ts";
import type { Systemd, UnitProperties, UnitStatus } from "./types.ts";

/** Where unit files are looked up, in systemd's order for system units. */
const unitDirs = ["/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"] as const;
const etcDir = "/etc/systemd/system";

export class OfflineUnitError extends Error {
  override readonly name = "OfflineUnitError";
}

/** The `[Install]` section of a unit file: the symlinks `systemctl enable` would create. */
export interface InstallSection {
  readonly wantedBy: string[];
  readonly requiredBy: string[];
  readonly alias: string[];
}

export function parseInstallSection(unitText: string): InstallSection {
  const out: InstallSection = { wantedBy: [], requiredBy: [], alias: [] };
  let inInstall = false;
  for (const raw of unitText.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      inInstall = line === "[Install]";
      continue;
    }
    if (!inInstall || line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const eq = line.indexOf("=");
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    const values = line
      .slice(eq + 1)
      .trim()
      .split(/\s+/)
      .filter((v) => v !== "");
    if (key === "WantedBy") out.wantedBy.push(...values);
    else if (key === "RequiredBy") out.requiredBy.push(...values);
    else if (key === "Alias") out.alias.push(...values);
  }
  return out;
}

/**
 * systemd for a mounted image root with no running manager (`systemctl --root`): enable/disable
 * create/remove the `[Install]` symlinks under /etc/systemd/system; daemon-reload and unit jobs have
 * nothing to act on and succeed (the units start on first boot through their symlinks).
 */
export class OfflineSystemd implements Systemd {
  /** Every verb called, in order, for the `apply --offline` report. */
  readonly actions: { action: string; units: string[] }[] = [];

  constructor(private readonly host: HostFs) {}

  async #unitFile(name: string): Promise<{ path: string; text: string } | undefined> {
    for (const dir of unitDirs) {
      const text = await this.host.readText(`${dir}/${name}`);
      if (text !== undefined) return { path: `${dir}/${name}`, text };
    }
    return undefined;
  }

  async #links(name: string): Promise<{ target: string; link: string }[]> {
    const unit = await this.#unitFile(name);
    if (unit === undefined) throw new OfflineUnitError(`unit file ${name} not found in ${unitDirs.join(", ")}`);
    const install = parseInstallSection(unit.text);
    return [
      ...install.wantedBy.map((t) => ({ target: unit.path, link: `${etcDir}/${t}.wants/${name}` })),
      ...install.requiredBy.map((t) => ({ target: unit.path, link: `${etcDir}/${t}.requires/${name}` })),
      ...install.alias.map((a) => ({ target: unit.path, link: `${etcDir}/${a}` })),
    ];
  }

  async daemonReload(): Promise<void> {
    this.actions.push({ action: "DaemonReload", units: [] });
  }

  async enable(units: readonly string[]): Promise<void> {
    this.actions.push({ action: "Enable", units: [...units] });
    for (const name of units) {
      for (const { target, link } of await this.#links(name)) {
        await this.host.ensureDir(link.slice(0, link.lastIndexOf("/")));
        await this.host.symlink(target, link);
      }
    }
  }

  async disable(units: readonly string[]): Promise<void> {
    this.actions.push({ action: "Disable", units: [...units] });
    for (const name of units) {
      // A unit whose file is already gone can still have stale links in the usual places.
      const links = (await this.#unitFile(name)) === undefined ? [] : await this.#links(name);
      for (const { link } of links) await this.host.remove(link);
    }
  }

  async start(unit: string): Promise<void> {
    this.actions.push({ action: "Start", units: [unit] });
  }

  async stop(unit: string): Promise<void> {
    this.actions.push({ action: "Stop", units: [unit] });
  }

  async restart(unit: string): Promise<void> {
    this.actions.push({ action: "Restart", units: [unit] });
  }

  async reload(unit: string): Promise<void> {
    this.actions.push({ action: "Reload", units: [unit] });
  }

  async listUnits(): Promise<UnitStatus[]> {
    return [];
  }

  async listUnitsByNames(names: readonly string[]): Promise<UnitStatus[]> {
    return names.map((name) => ({ name, description: "", loadState: "not-found", activeState: "inactive", subState: "dead" }));
  }

  async unitProperties(): Promise<UnitProperties> {
    return {
      activeState: "inactive",
      subState: "dead",
      loadState: "not-found",
      unitFileState: "",
      stateChangeTimestampMs: 0,
      invocationId: "",
    };
  }

  async triggeredBy(): Promise<string[]> {
    return [];
  }

  async serviceType(): Promise<string> {
    return "simple";
  }

  close(): void {}
}
