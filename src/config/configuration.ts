import * as v from "valibot";
import { clientConnectionSchema } from "./client-connection.ts";
import { controllersSchema } from "./controllers.ts";
import { int64, maybe, maybeMapping, stringOr, section } from "./fields.ts";
import { serverSchema } from "./server.ts";

export const configApiVersion = "nodeagent.config.gardener.cloud/v1alpha1";
export const configKind = "NodeAgentConfiguration";

export const apiServerSchema = v.object({
  server: stringOr(""),
  caFile: stringOr(""),
});

const bootstrapSchema = v.object({
  /** Integer byte count of the kubelet data disk (not a quantity such as `50Gi`). */
  kubeletDataVolumeSize: maybe(int64),
});

const debuggingSchema = v.object({
  enableProfiling: maybe(v.boolean()),
  enableContentionProfiling: maybe(v.boolean()),
});

/**
 * `NodeAgentConfiguration` after decoding: every default of the Go agent applied, durations in
 * milliseconds, `kubernetesVersion` canonical. Unknown fields are dropped.
 */
export const nodeAgentConfigurationSchema = v.object({
  clientConnection: section(clientConnectionSchema),
  logLevel: stringOr("info"),
  logFormat: stringOr("json"),
  server: section(serverSchema),
  debugging: maybeMapping(debuggingSchema),
  featureGates: maybeMapping(v.record(v.string(), v.boolean())),
  apiServer: section(apiServerSchema),
  bootstrap: maybeMapping(bootstrapSchema),
  controllers: section(controllersSchema),
});

export type NodeAgentConfiguration = v.InferOutput<typeof nodeAgentConfigurationSchema>;
export type APIServerConfiguration = v.InferOutput<typeof apiServerSchema>;
