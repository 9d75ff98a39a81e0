import { type GrpcChannel, dialUnix } from "./grpc.ts";
import { MessageWriter, messageFields, readFields, stringField, varintField } from "./protobuf.ts";

const service = "/runtime.v1.RuntimeService";

/** What the agent knows of a pod sandbox (runtime.v1.PodSandbox, the fields it reads). */
export interface PodSandbox {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  /** 0 = SANDBOX_READY, 1 = SANDBOX_NOTREADY. */
  readonly state: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** The three calls `reset` makes on the CRI runtime service; each is bounded by the client's timeout. */
export interface CriRuntime {
  /** `crictl pods`: every sandbox, ready or not. */
  listPodSandboxes(opts?: CallOptions): Promise<PodSandbox[]>;
  /** `crictl stopp <id>`: stops the sandbox and its containers (idempotent). */
  stopPodSandbox(id: string, opts?: CallOptions): Promise<void>;
  /** `crictl rmp <id>`: removes a stopped sandbox (idempotent). */
  removePodSandbox(id: string, opts?: CallOptions): Promise<void>;
  close(): void;
}

const decodeSandbox = (buf: Uint8Array): PodSandbox => {
  const f = readFields(buf);
  const meta = readFields(messageFields(f, 2)[0] ?? new Uint8Array());
  return {
    id: stringField(f, 1),
    name: stringField(meta, 1),
    uid: stringField(meta, 2),
    namespace: stringField(meta, 3),
    state: Number(varintField(f, 3)),
  };
};

/** A CRI runtime client over any gRPC channel; `timeoutMs` bounds every call (upstream: 2 s). */
function criRuntimeOver(channel: GrpcChannel, timeoutMs: number): CriRuntime {
  const call = (method: string, req: MessageWriter, opts?: CallOptions) =>
    channel.unary(`${service}/${method}`, req.finish(), { timeoutMs, ...(opts?.signal !== undefined ? { signal: opts.signal } : {}) });
  return {
    async listPodSandboxes(opts) {
      const res = await call("ListPodSandbox", new MessageWriter(), opts);
      return messageFields(readFields(res), 1).map(decodeSandbox);
    },
    async stopPodSandbox(id, opts) {
      await call("StopPodSandbox", new MessageWriter().string(1, id), opts);
    },
    async removePodSandbox(id, opts) {
      await call("RemovePodSandbox", new MessageWriter().string(1, id), opts);
    },
    close: () => channel.close(),
  };
}

/** Connects to the CRI socket (e.g. `unix:///var/run/containerd/containerd.sock`) within `timeoutMs`. */
export async function connectCriRuntime(endpoint: string, timeoutMs: number, signal?: AbortSignal): Promise<CriRuntime> {
  return criRuntimeOver(await dialUnix(endpoint, timeoutMs, signal), timeoutMs);
}
