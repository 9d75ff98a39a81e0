import type { HostFs } from "../../../../host/index.ts";
import type { CriConfig, RegistryConfig } from "../../../../osc/index.ts";
import { certsDir, parseContainerdVersion, patchContainerdConfig } from "./config-toml.ts";
import { ContainerdConfigError } from "./errors.ts";
import { hostsToml } from "./hosts-toml.ts";
import type { ContainerdInfo } from "./info.ts";

const containerdDirs = ["/var/bin/containerruntimes", "/etc/containerd", "/etc/containerd/conf.d", certsDir] as const;
export const configTomlPath = "/etc/containerd/config.toml";

/** Mode of an existing file, or `fallback` when it is new ("0644 on creation"). */
async function modeOr(host: HostFs, path: string, fallback: number): Promise<number> {
  const st = await host.stat(path);
  return st?.kind === "file" ? st.mode : fallback;
}

/** §7.1 + §7.2: directories, default config.toml when missing, then the patched config. */
export async function configureContainerd(
  deps: { readonly host: HostFs; readonly containerdInfo: ContainerdInfo },
  cri: CriConfig,
  signal?: AbortSignal,
): Promise<void> {
  const { host, containerdInfo } = deps;
  for (const d of containerdDirs) await host.ensureDir(d, 0o755);
  let text = await host.readText(configTomlPath);
  if (text === undefined) {
    text = await containerdInfo.defaultConfig(signal);
    await host.writeFileAtomic(configTomlPath, text, 0o644);
  }
  const version = parseContainerdVersion(await containerdInfo.version(signal));
  const patched = patchContainerdConfig(text, cri, version);
  await host.writeFileAtomic(configTomlPath, patched, await modeOr(host, configTomlPath, 0o644));
}

/** certs.d/<upstream> for a registry; an upstream that is not a single path element is refused. */
export function registryDir(upstream: string): string {
  if (upstream === "" || upstream === "." || upstream === ".." || upstream.includes("/")) {
    throw new ContainerdConfigError(`invalid registry upstream "${upstream}"`);
  }
  return `${certsDir}/${upstream}`;
}

/** §7.4: (over)writes certs.d/<upstream>/hosts.toml. */
export async function writeHostsToml(host: HostFs, r: RegistryConfig): Promise<void> {
  const dir = registryDir(r.upstream);
  await host.ensureDir(dir, 0o755);
  const path = `${dir}/hosts.toml`;
  await host.writeFileAtomic(path, hostsToml(r), await modeOr(host, path, 0o644));
}
