import * as v from "valibot";

const str = v.optional(v.string());

const clusterSchema = v.object({
  server: v.pipe(v.string(), v.nonEmpty("must not be empty")),
  "certificate-authority": str,
  "certificate-authority-data": str,
  "insecure-skip-tls-verify": v.optional(v.boolean()),
  "tls-server-name": str,
  "proxy-url": str,
});

const userSchema = v.object({
  token: str,
  tokenFile: str,
  "client-certificate": str,
  "client-certificate-data": str,
  "client-key": str,
  "client-key-data": str,
  username: str,
  password: str,
  exec: v.optional(v.unknown()),
  "auth-provider": v.optional(v.unknown()),
  as: str,
  "as-uid": str,
  "as-groups": v.optional(v.unknown()),
  "as-user-extra": v.optional(v.unknown()),
});

const name = v.pipe(v.string(), v.nonEmpty("must not be empty"));

/** The subset of a kubeconfig (clientcmd v1 Config) the agent understands; unknown fields are ignored. */
export const kubeconfigSchema = v.object({
  clusters: v.nullish(v.array(v.object({ name, cluster: clusterSchema })), []),
  users: v.nullish(v.array(v.object({ name, user: v.nullish(userSchema, {}) })), []),
  contexts: v.nullish(
    v.array(
      v.object({
        name,
        context: v.object({ cluster: v.string(), user: v.optional(v.string(), ""), namespace: str }),
      }),
    ),
    [],
  ),
  "current-context": v.nullish(v.string(), ""),
});

export type KubeconfigUser = v.InferOutput<typeof userSchema>;
