import type { ApiServerSim } from "../doubles/apiserver/index.ts";

/** SHA-256 hex of the OSC text: the Secret's `checksum/data-script`, as gardenlet computes it. */
export const oscChecksum = (oscYaml: string): string => new Bun.CryptoHasher("sha256").update(oscYaml).digest("hex");

/**
 * Creates or replaces the OSC Secret `kube-system/<secretName>` in the simulator's store (no API request),
 * its `osc.yaml` and checksum as gardenlet writes them, plus `meta`'s annotations and labels; returns the checksum.
 */
export function putOscSecret(
  sim: ApiServerSim,
  secretName: string,
  oscYaml: string,
  meta: { readonly annotations?: Record<string, string>; readonly labels?: Record<string, string> } = {},
): string {
  const checksum = oscChecksum(oscYaml);
  const metadata = {
    name: secretName,
    namespace: "kube-system",
    annotations: { "checksum/data-script": checksum, ...meta.annotations },
    ...(meta.labels === undefined ? {} : { labels: meta.labels }),
  };
  const secret = { apiVersion: "v1", kind: "Secret", metadata, data: { "osc.yaml": Buffer.from(oscYaml).toString("base64") } };
  if (sim.store.get("secrets", "kube-system", secretName) === undefined) sim.store.create("secrets", secret);
  else sim.store.update("secrets", secret);
  return checksum;
}
