// node_init_user_data_bytes: the node-init user data as the cloud provider receives it, i.e. the output
// of the compiled agent's `render --provision` (cloud-config, the default) after machine-controller-manager
// replaced <<BOOTSTRAP_TOKEN>> and <<MACHINE_NAME>>. The cluster CA is one self-signed RSA-3072
// certificate made by openssl (a CA bundle holds two during a CA rotation); the other inputs are of the
// length a production shoot has. Providers cap user data at 16 KiB; the target is 4 KiB.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentBinary } from "../test/harness/sandbox.ts";

const binary = process.env["BENCH_BINARY"] ?? agentBinary;
const work = await mkdtemp(join(tmpdir(), "bench-user-data-"));
try {
  const ca = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "rsa:3072", "-nodes", "-keyout", "/dev/null", "-subj", "/CN=kubernetes", "-days", "3650"],
    { stderr: "pipe" },
  );
  if (ca.exitCode !== 0) throw new Error(`openssl req failed: ${ca.stderr.toString().trim()}`);
  const caFile = join(work, "ca.crt");
  await writeFile(caFile, ca.stdout);
  const render = Bun.spawnSync([
    binary,
    "render",
    "--provision",
    "--server=https://api.prod-eu1.my-project.shoot.example.com",
    `--ca-file=${caFile}`,
    "--image=europe-docker.pkg.dev/gardener-project/releases/gardener/gardener-node-agent:v1.110.0",
    "--secret-name=gardener-node-agent-worker-z1-9f3a1",
    "--kubernetes-version=1.33.4",
    "--kubelet-data-volume-size=53687091200",
    "--agent-version=v1.110.0",
  ]);
  if (render.exitCode !== 0) throw new Error(`render --provision failed: ${render.stderr.toString().trim()}`);
  const template = render.stdout.toString();
  for (const p of ["<<BOOTSTRAP_TOKEN>>", "<<MACHINE_NAME>>"]) if (!template.includes(p)) throw new Error(`user data lacks ${p}`);
  const received = template
    .replaceAll("<<BOOTSTRAP_TOKEN>>", "k8s3df.0123456789abcdef")
    .replaceAll("<<MACHINE_NAME>>", "shoot--my-project--prod-eu1-worker-z1-7d9c5-x2x4k");
  const bytes = Buffer.byteLength(received);
  console.error(`bench user data: ${bytes} bytes (CA ${ca.stdout.length} bytes)`);
  console.log(JSON.stringify({ node_init_user_data_bytes: bytes, node_init_user_data_ca_bytes: ca.stdout.length }));
} finally {
  await rm(work, { recursive: true, force: true });
}
