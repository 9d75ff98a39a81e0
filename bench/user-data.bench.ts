// node-init user data as the cloud provider receives it: the compiled agent's `render --provision` after
// machine-controller-manager replaced <<BOOTSTRAP_TOKEN>> and <<MACHINE_NAME>> (a plain byte replacement, as
// MCM's Go code does; in the gzip form the placeholders sit in the gzip header's comment).
//   node_init_user_data_bytes          `--format gzip`: the binary user data (target: <= 4096 - 300 bytes)
//   node_init_user_data_base64_bytes   the same, base64-encoded, for provider APIs that take user data as base64
//                                      (their limits usually apply to the bytes before base64)
//   node_init_user_data_text_bytes     the default cloud-config text form, for providers that need a string
//   node_init_user_data_rsa4096_bytes  `--format gzip` with one RSA-4096 CA instead
//   node_init_user_data_ca_rotation_bytes  `--format gzip` with the bundle of a CA rotation: two RSA-3072
//                                      certificates (gardenlet's cluster CA bundle while old and new CA are both
//                                      trusted; nodes are rolled in that phase, so new nodes get it)
// The cluster CA is one self-signed RSA-3072 certificate made by openssl (gardener's secrets manager makes
// 3072-bit CAs; openssl adds an authority key id, so its certificate is a little longer than gardener's); the
// other inputs are of the length a production shoot has. Registry CA and cosign key are off.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentBinary } from "../test/harness/sandbox.ts";

const binary = process.env["BENCH_BINARY"] ?? agentBinary;
const work = await mkdtemp(join(tmpdir(), "bench-user-data-"));

function selfSignedCa(key: string): Buffer {
  const ca = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", key, "-nodes", "-keyout", "/dev/null", "-subj", "/CN=kubernetes", "-days", "3650"],
    { stderr: "pipe" },
  );
  if (ca.exitCode !== 0) throw new Error(`openssl req failed: ${ca.stderr.toString().trim()}`);
  return ca.stdout;
}

try {
  const ca = selfSignedCa("rsa:3072");
  const render = async (format: string, caBundle: Buffer = ca): Promise<Buffer> => {
    const caFile = join(work, "ca.crt");
    await writeFile(caFile, caBundle);
    const run = Bun.spawnSync([
      binary,
      "render",
      "--provision",
      `--format=${format}`,
      "--server=https://api.prod-eu1.my-project.shoot.example.com",
      `--ca-file=${caFile}`,
      "--image=europe-docker.pkg.dev/gardener-project/releases/gardener/gardener-node-agent:v1.110.0",
      "--secret-name=gardener-node-agent-worker-z1-9f3a1",
      "--kubernetes-version=1.33.4",
      "--kubelet-data-volume-size=53687091200",
      "--agent-version=v1.110.0",
    ]);
    if (run.exitCode !== 0) throw new Error(`render --provision --format=${format} failed: ${run.stderr.toString().trim()}`);
    // latin1 keeps every byte as one char, so the replacement is byte for byte like MCM's.
    const template = run.stdout.toString("latin1");
    for (const p of ["<<BOOTSTRAP_TOKEN>>", "<<MACHINE_NAME>>"])
      if (!template.includes(p)) throw new Error(`${format} user data lacks ${p}`);
    const received = template
      .replaceAll("<<BOOTSTRAP_TOKEN>>", "k8s3df.0123456789abcdef")
      .replaceAll("<<MACHINE_NAME>>", "shoot--my-project--prod-eu1-worker-z1-7d9c5-x2x4k");
    return Buffer.from(received, "latin1");
  };
  const gzip = await render("gzip");
  const text = await render("cloud-config");
  const base64 = gzip.toString("base64").length;
  const rsa4096 = await render("gzip", selfSignedCa("rsa:4096"));
  const rotation = await render("gzip", Buffer.concat([ca, selfSignedCa("rsa:3072")]));
  console.error(
    `bench user data: gzip ${gzip.length} bytes (base64 ${base64}), cloud-config ${text.length} bytes (CA ${ca.length} bytes); ` +
      `gzip with an RSA-4096 CA ${rsa4096.length}, with a CA-rotation bundle (2 x RSA-3072) ${rotation.length}`,
  );
  console.log(
    JSON.stringify({
      node_init_user_data_bytes: gzip.length,
      node_init_user_data_base64_bytes: base64,
      node_init_user_data_text_bytes: text.length,
      node_init_user_data_ca_bytes: ca.length,
      node_init_user_data_rsa4096_bytes: rsa4096.length,
      node_init_user_data_ca_rotation_bytes: rotation.length,
    }),
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
