// Artifact sizes: the compiled agent and its OCI layers (gzip as pushed; zstd -19 as the alternative)
// against a hello-world compiled by the same Bun and compressed the same way.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = join(import.meta.dir, "..");
const layoutDir = join(repo, "dist/oci");

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string };
}
const blob = (digest: string) => Bun.file(join(layoutDir, "blobs/sha256", digest.replace(/^sha256:/, "")));
const readJson = async (digest: string) => (await blob(digest).json()) as { manifests?: Descriptor[]; layers?: Descriptor[] };

async function layerSizes(): Promise<Record<string, number>> {
  const top = (await Bun.file(join(layoutDir, "index.json")).json()) as { manifests: Descriptor[] };
  const out: Record<string, number> = {};
  for (const entry of top.manifests) {
    const index = await readJson(entry.digest);
    for (const m of index.manifests ?? []) {
      const manifest = await readJson(m.digest);
      const layer = manifest.layers?.[0];
      if (layer !== undefined && m.platform !== undefined) out[`oci_layer_gzip_bytes_${m.platform.architecture}`] = layer.size;
    }
  }
  return out;
}

const work = await mkdtemp(join(tmpdir(), "gna-oci-size-"));
try {
  await Bun.write(join(work, "floor.ts"), 'console.log("hello");\n');
  const build = Bun.spawnSync([
    process.execPath,
    "build",
    "--compile",
    "--minify",
    join(work, "floor.ts"),
    "--outfile",
    join(work, "floor"),
  ]);
  if (build.exitCode !== 0) throw new Error(`floor build failed: ${build.stderr.toString()}`);
  const floor = new Uint8Array(await Bun.file(join(work, "floor")).arrayBuffer());
  const agent = new Uint8Array(await Bun.file(join(repo, "dist/gardener-node-agent-linux-amd64")).arrayBuffer());
  const layers = await layerSizes();
  console.log(
    JSON.stringify({
      ...layers,
      oci_layer_zstd19_bytes_amd64: Bun.zstdCompressSync(agent, { level: 19 }).length,
      floor_gzip_bytes: Bun.gzipSync(floor, { level: 9 }).length,
      floor_zstd19_bytes: Bun.zstdCompressSync(floor, { level: 19 }).length,
      amd64_binary_bytes: agent.length,
    }),
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
