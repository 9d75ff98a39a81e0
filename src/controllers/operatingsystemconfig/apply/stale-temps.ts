import type { HostFs } from "../../../host/index.ts";
import type { Logger } from "../../../log/index.ts";
import type { Osc } from "../../../osc/index.ts";
import { certsDir, configTomlPath } from "./containerd/index.ts";
import { stateDir, unitDir } from "../constants.ts";
import { allFiles, mergeUnits } from "../plan/merge.ts";
import { readChanges, readLastAppliedDigests } from "../plan/state.ts";

const dirName = (p: string) => p.slice(0, p.lastIndexOf("/")) || "/";

/** Every directory the agent writes into for `osc` (plus its fixed ones): where a kill leaves `.<name>.tmp-<hex>`. */
export function writtenDirs(osc: Osc | undefined, hostName: string, extraPaths: readonly string[] = []): string[] {
  const dirs = new Set<string>([stateDir, `${stateDir}/credentials`, unitDir, dirName(configTomlPath)]);
  for (const p of extraPaths) dirs.add(dirName(p));
  if (osc !== undefined) {
    for (const f of allFiles(osc, hostName)) dirs.add(dirName(f.path));
    for (const u of mergeUnits(osc)) if ((u.dropIns ?? []).length > 0) dirs.add(`${unitDir}/${u.name}.d`);
    for (const r of osc.spec.criConfig?.containerd?.registries ?? []) {
      if (r.upstream !== "" && !r.upstream.includes("/") && !r.upstream.startsWith(".")) dirs.add(`${certsDir}/${r.upstream}`);
    }
  }
  return [...dirs].sort();
}

/**
 * Removes the agent's own stale temps from `dirs`; an unreadable directory is logged and skipped (never fails an apply).
 * `listings`: entry names of directories the apply's planning listed, not read again (plan/targets.ts).
 */
export async function removeStaleTemps(
  host: HostFs,
  dirs: readonly string[],
  log: Logger,
  listings?: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<number> {
  // All directories at once (in a row they were one pool round trip each); logged in directory order.
  const outcomes = await Promise.allSettled(dirs.map((dir) => host.removeStaleTemps(dir, listings?.get(dir))));
  let removed = 0;
  outcomes.forEach((outcome, i) => {
    if (outcome.status === "rejected") {
      log.info("Cannot clean up stale temporary files", { path: dirs[i], err: outcome.reason });
      return;
    }
    for (const path of outcome.value) {
      log.info("Removed stale temporary file", { path });
      removed++;
    }
  });
  return removed;
}

/**
 * The start-up clean-up: the directories of the last applied OSC and of an unfinished change set (a
 * kill during its first write leaves temps where last-applied never wrote). Unreadable state only
 * narrows the search to the fixed directories.
 */
export async function removeStaleTempsAtStart(deps: {
  readonly host: HostFs;
  readonly hostName: string;
  readonly tokenPaths: readonly string[];
  readonly log: Logger;
}): Promise<number> {
  const { host, log } = deps;
  let lastApplied: Osc | undefined;
  let pending: readonly string[] = [];
  try {
    lastApplied = await readLastAppliedDigests(host);
    pending = [...((await readChanges(host))?.files.changed ?? [])].map((f) => f.path);
  } catch (err) {
    log.info("Cannot read the applied state, cleaning up the fixed directories only", { err });
  }
  return removeStaleTemps(host, writtenDirs(lastApplied, deps.hostName.toLowerCase(), [...deps.tokenPaths, ...pending]), log);
}
