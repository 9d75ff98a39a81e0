/** Combined stdout+stderr and exit code of one finished command. */
export interface CommandOutput {
  readonly code: number;
  readonly output: string;
}

/** Runs one host command (argv, no shell), killed when `signal` aborts. Injected so tests need no real OS update. */
export type RunCommand = (argv: readonly string[], signal: AbortSignal) => Promise<CommandOutput>;

export interface InPlaceTiming {
  /** Between attempts of an OS update that reported network problems (spec: 30 s). */
  readonly osUpdateRetryIntervalMs: number;
  /**
   * How long network problems are retried. The spec says 5 min, but every reconcile runs under the
   * 3-minute deadline (§2.4), so a longer window would be cut off without a report; 2 min leaves time
   * to label the Node.
   */
  readonly osUpdateRetryWindowMs: number;
  /** kubelet healthz poll interval (spec: 5 s). */
  readonly kubeletHealthIntervalMs: number;
  /** How long kubelet may take to become healthy (spec: 5 min; bounded like the OS update window). */
  readonly kubeletHealthTimeoutMs: number;
}

const defaultInPlaceTiming: InPlaceTiming = {
  osUpdateRetryIntervalMs: 30_000,
  osUpdateRetryWindowMs: 120_000,
  kubeletHealthIntervalMs: 5_000,
  kubeletHealthTimeoutMs: 120_000,
};

/** What only in-place updates need beyond the OSC controller's own dependencies. */
export interface InPlaceDeps {
  readonly runCommand: RunCommand;
  /** One probe of kubelet's healthz (http://127.0.0.1:10248/healthz, 10 s timeout): true on HTTP 200. */
  readonly kubeletHealthy: (signal: AbortSignal) => Promise<boolean>;
  /** CA rotation: a fresh client certificate for the agent into credentials/kubeconfig (CSR with the current identity). */
  readonly renewAgentCredentials: (signal: AbortSignal) => Promise<void>;
  /** `apiServer` of the agent configuration: the kubelet bootstrap kubeconfig points there. */
  readonly apiServer: { readonly server: string; readonly caFile: string };
  readonly timing?: Partial<InPlaceTiming>;
}

export const timingOf = (d: InPlaceDeps): InPlaceTiming => ({ ...defaultInPlaceTiming, ...d.timing });

class InPlaceNotWiredError extends Error {
  override readonly name = "InPlaceNotWiredError";
  constructor() {
    super("the operating system config asks for an in-place update but this agent was started without in-place update support");
  }
}

/** `inPlace`, or the error an in-place OSC meets on an agent started without in-place update support. */
export const wired = (inPlace: InPlaceDeps | undefined): InPlaceDeps => {
  if (inPlace === undefined) throw new InPlaceNotWiredError();
  return inPlace;
};
