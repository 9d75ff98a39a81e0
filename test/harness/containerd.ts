import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connectCriRuntime, dialUnix, MessageWriter, readFields, stringField } from "../../src/cri/index.ts";
import type { PodSandbox } from "../../src/cri/index.ts";
import { pauseImageTar } from "./pause-image.ts";
import { eventually } from "./eventually.ts";

/** Debian's containerd, started privately for a test: own socket, root, state and CRI settings. */
export interface Containerd {
  /** The gRPC socket path. */
  readonly socket: string;
  readonly dir: string;
  /** Creates a host-network pod sandbox through the CRI (RunPodSandbox); returns its id. */
  runPodSandbox(name: string, namespace?: string): Promise<string>;
  listPodSandboxes(): Promise<PodSandbox[]>;
  /** Stops and removes whatever sandboxes are left, then stops containerd and removes its dirs. */
  stop(): Promise<void>;
}

const pauseImageRef = "localhost/gna-test/pause:1";

/**
 * Starts containerd with its gRPC socket at `socket` (default: in its temp dir) and imports a
 * locally built pause image as the CRI sandbox image. Two settings make sandboxes run in this
 * machine's sandbox: `restrict_oom_score_adj` (the sandbox may not lower oom_score_adj to -998)
 * and the `native` snapshotter (no overlayfs needed). Pods use the host network, so no CNI is needed.
 */
export async function startContainerd(opts: { readonly socket?: string } = {}): Promise<Containerd> {
  const dir = await mkdtemp(join(tmpdir(), "gna-containerd-"));
  const socket = opts.socket ?? join(dir, "containerd.sock");
  await mkdir(dirname(socket), { recursive: true });
  const config = `version = 2
root = "${dir}/root"
state = "${dir}/state"
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImageRef}"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${dir}/cni-bin"
    conf_dir = "${dir}/cni-conf"
`;
  await writeFile(join(dir, "config.toml"), config);
  let log = "";
  const proc = Bun.spawn(["containerd", "--config", join(dir, "config.toml")], { stdout: "pipe", stderr: "pipe" });
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) log += dec.decode(chunk, { stream: true });
  };
  const drained = Promise.all([drain(proc.stdout as ReadableStream<Uint8Array>), drain(proc.stderr as ReadableStream<Uint8Array>)]);
  const reachable = async () => {
    if (proc.exitCode !== null) throw new Error(`containerd exited with ${proc.exitCode}: ${log.slice(-2000)}`);
    try {
      const ch = await dialUnix(socket, 500);
      ch.close();
      return true;
    } catch {
      return false;
    }
  };
  await eventually("containerd's socket", reachable, { timeoutMs: 20_000, intervalMs: 50 });

  const imageTar = join(dir, "pause-image.tar");
  await writeFile(imageTar, pauseImageTar(pauseImageRef));
  const ctr = Bun.spawnSync(["ctr", "-a", socket, "-n", "k8s.io", "images", "import", imageTar]);
  if (ctr.exitCode !== 0) throw new Error(`ctr images import failed: ${ctr.stderr.toString()}`);

  const withCri = async <T>(fn: (cri: Awaited<ReturnType<typeof connectCriRuntime>>) => Promise<T>): Promise<T> => {
    const cri = await connectCriRuntime(`unix://${socket}`, 30_000);
    try {
      return await fn(cri);
    } finally {
      cri.close();
    }
  };

  return {
    socket,
    dir,
    async runPodSandbox(name, namespace = "default") {
      const meta = new MessageWriter().string(1, name).string(2, `uid-${name}`).string(3, namespace);
      // NamespaceOption: network = NODE (2), pid = CONTAINER (1), ipc = NODE (2); no hostname with host network.
      const namespaces = new MessageWriter().varint(1, 2).varint(2, 1).varint(3, 2);
      const linux = new MessageWriter().message(2, new MessageWriter().message(1, namespaces));
      const config = new MessageWriter()
        .message(1, meta)
        .string(3, join(dir, "pod-logs", name))
        .message(8, linux);
      const ch = await dialUnix(socket, 5_000);
      try {
        const res = await ch.unary("/runtime.v1.RuntimeService/RunPodSandbox", new MessageWriter().message(1, config).finish(), {
          timeoutMs: 60_000,
        });
        return stringField(readFields(res), 1);
      } finally {
        ch.close();
      }
    },
    listPodSandboxes: () => withCri((cri) => cri.listPodSandboxes()),
    async stop() {
      if (proc.exitCode === null) {
        await withCri(async (cri) => {
          for (const sb of await cri.listPodSandboxes()) {
            await cri.stopPodSandbox(sb.id);
            await cri.removePodSandbox(sb.id);
          }
        }).catch(() => undefined); // best effort: the test may have broken containerd on purpose
        proc.kill("SIGTERM");
      }
      await proc.exited;
      await drained;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
