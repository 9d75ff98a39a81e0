import * as v from "valibot";

/** What `prepare` decided and `verify` needs; stored as <work>/context.json. */
export const RunContext = v.object({
  work: v.string(),
  repo: v.string(),
  apiUrl: v.string(), // host side
  caFile: v.string(),
  adminToken: v.string(),
  guestApiUrl: v.string(),
  guestRegistry: v.string(),
  registryHost: v.string(),
  digest: v.string(),
  agentVersion: v.string(),
  hostname: v.string(),
  nodeName: v.string(),
  machineName: v.string(),
  oscSecretName: v.string(),
  kubernetesVersion: v.string(),
  tokenSecretName: v.string(),
  tokenPath: v.string(),
  tokenValue: v.string(),
  /** Why the project's provision user data could not be used (then the pipeline probe ran instead). */
  provisionMissing: v.optional(v.string()),
});
export type RunContext = v.InferOutput<typeof RunContext>;

/** The API server simulator's start-up line. Extra fields are kept for the control API. */
export const ApiInfo = v.looseObject({
  url: v.string(),
  caFile: v.string(),
  adminToken: v.string(),
  controlUrl: v.string(),
});
export type ApiInfo = v.InferOutput<typeof ApiInfo>;
