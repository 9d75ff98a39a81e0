// `make push REGISTRY=host:port/repo:tag`: bun run oci/push.ts dist/oci host:port/repo:tag
// Environment: REGISTRY_USERNAME/REGISTRY_PASSWORD (basic, or for bearer token requests),
// REGISTRY_CA_FILE (PEM), REGISTRY_PLAIN_HTTP=1 (plain HTTP; loopback registries always use it),
// COSIGN_KEY=<PKCS#8 PEM, ECDSA P-256> (also sign the pushed index like `cosign sign --key`).
import { createTransport } from "../src/registry/transport.ts";
import { parseImageReference, registryEndpoint } from "../src/registry/reference.ts";
import { importSigningKey } from "../src/registry/cosign.ts";
import { pushOciLayout } from "./push-layout.ts";
import { signImage } from "./sign.ts";

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/;

async function main(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const [layoutDir, target] = args;
  if (layoutDir === undefined || target === undefined || target === "") {
    console.error("usage: bun run oci/push.ts <oci-layout-dir> <host[:port]/repo:tag>   (make push REGISTRY=…)");
    return 2;
  }
  const ref = parseImageReference(target);
  const endpoint = registryEndpoint(ref.registry);
  const plain = env["REGISTRY_PLAIN_HTTP"] === "1" || LOOPBACK.test(endpoint);
  const user = env["REGISTRY_USERNAME"];
  const password = env["REGISTRY_PASSWORD"];
  const caFile = env["REGISTRY_CA_FILE"];
  const transport = createTransport({
    ...(plain ? { plainHttpHosts: [endpoint] } : {}),
    ...(user !== undefined && password !== undefined ? { credentials: { [endpoint]: { username: user, password } } } : {}),
    ...(caFile !== undefined ? { caPem: await Bun.file(caFile).text() } : {}),
  });
  const keyFile = env["COSIGN_KEY"];
  // The key is read before anything is pushed: a bad key fails the push, not only the signing.
  const key = keyFile === undefined || keyFile === "" ? undefined : await importSigningKey(await Bun.file(keyFile).text(), keyFile);
  const result = await pushOciLayout(layoutDir, target, transport);
  console.error(`pushed ${result.uploadedBlobs} blobs (${result.uploadedBytes} bytes) and ${result.uploadedManifests} manifests`);
  if (key !== undefined) console.error(`signed as ${(await signImage(result.reference, key, transport)).signatureTag}`);
  console.log(result.reference);
  return 0;
}

try {
  process.exit(await main(process.argv.slice(2), process.env));
} catch (err) {
  console.error(`push failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
