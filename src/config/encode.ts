import { yamlPackage } from "./yaml-package.ts";
import { configApiVersion, configKind } from "./configuration.ts";
import type { NodeAgentConfiguration } from "./configuration.ts";
import { formatDuration } from "./duration.ts";

const defined = <T extends Record<string, unknown>>(obj: T): Partial<T> =>
  Object.fromEntries(Object.entries(obj).filter(([, x]) => x !== undefined)) as Partial<T>;

/** The config as the Go agent would serialise it (JSON field names, Go duration strings). */
export const configToDocument = (c: NodeAgentConfiguration): Record<string, unknown> => {
  const { controllers: ctl } = c;
  return defined({
    apiVersion: configApiVersion,
    kind: configKind,
    apiServer: { server: c.apiServer.server, caFile: c.apiServer.caFile },
    bootstrap: c.bootstrap === undefined ? undefined : defined({ ...c.bootstrap }),
    clientConnection: { ...c.clientConnection },
    controllers: {
      operatingSystemConfig: defined({
        kubernetesVersion: ctl.operatingSystemConfig.kubernetesVersion,
        secretName: ctl.operatingSystemConfig.secretName,
        syncPeriod: formatDuration(ctl.operatingSystemConfig.syncPeriod),
        stagingMaxBytes: ctl.operatingSystemConfig.stagingMaxBytes,
      }),
      systemdUnitCheck: {
        stuckThreshold: formatDuration(ctl.systemdUnitCheck.stuckThreshold),
        syncPeriod: formatDuration(ctl.systemdUnitCheck.syncPeriod),
      },
      token: defined({
        syncConfigs: ctl.token.syncConfigs?.map((s) => ({ secretName: s.secretName, path: s.path })),
        syncPeriod: formatDuration(ctl.token.syncPeriod),
      }),
    },
    debugging: c.debugging === undefined ? undefined : defined({ ...c.debugging }),
    featureGates: c.featureGates === undefined ? undefined : { ...c.featureGates },
    logFormat: c.logFormat,
    logLevel: c.logLevel,
    server: {
      healthProbes: { ...c.server.healthProbes },
      metrics: { ...c.server.metrics },
    },
  });
};

/**
 * YAML of the whole config: keys sorted, canonical durations (`12h0m0s`) and versions, defaults
 * explicit. `decodeConfig(encodeConfig(c))` equals `c`.
 */
export const encodeConfig = (c: NodeAgentConfiguration): string =>
  yamlPackage().stringify(configToDocument(c), { sortMapEntries: true, version: "1.1", indentSeq: false, lineWidth: 0 });
