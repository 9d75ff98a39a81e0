/**
 * The token sync configs gardenlet puts into the agent's config of the reconcile OSC
 * (bootstrap-and-config.md §11.1): the log shipper's token on every pool that ships logs, and on the
 * control-plane pool of a self-hosted shoot the tokens of the static control-plane pods and the admin.
 */
export interface TokenSync {
  readonly secretName: string;
  readonly path: string;
}

export interface PoolTokenInput {
  /** gardenlet gate `OpenTelemetryCollector` on and OpenTelemetry log shipping enabled. */
  readonly openTelemetryCollector?: boolean;
  /** Valitail log shipping enabled (used only without the OpenTelemetry collector). */
  readonly valitail?: boolean;
  /** The pool runs the control plane of a self-hosted shoot (gardenadm). */
  readonly controlPlane?: boolean;
}

const openTelemetryCollectorToken: TokenSync = {
  secretName: "gardener-opentelemetry-collector",
  path: "/var/lib/opentelemetry-collector/auth-token",
};
const valitailToken: TokenSync = { secretName: "gardener-valitail", path: "/var/lib/valitail/auth-token" };

/** The three tokens of a control-plane pool, in gardenlet's order. */
const controlPlaneTokens: readonly TokenSync[] = [
  { secretName: "shoot-access-kube-controller-manager", path: "/var/lib/static-pods/kube-controller-manager/kubeconfig/token" },
  { secretName: "shoot-access-kube-scheduler", path: "/var/lib/static-pods/kube-scheduler/kubeconfig/token" },
  { secretName: "shoot-access-cluster-admin", path: "/etc/kubernetes/admin-token" },
];

/** `controllers.token.syncConfigs` for one pool; the token controller writes each file with mode 0640. */
export function tokenSyncConfigs(pool: PoolTokenInput): TokenSync[] {
  const out: TokenSync[] = [];
  if (pool.openTelemetryCollector === true) out.push(openTelemetryCollectorToken);
  else if (pool.valitail === true) out.push(valitailToken);
  if (pool.controlPlane === true) out.push(...controlPlaneTokens);
  return out;
}
