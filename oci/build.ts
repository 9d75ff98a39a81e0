// `make oci`: bun run oci/build.ts --version V --revision R [--dist dist] [--out dist/oci] [--zstd] [--measure]
import { parseArgs } from "node:util";
import { buildOciLayout } from "./layout.ts";

const SOURCE = "https://github.com/gardener/gardener";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      version: { type: "string" },
      revision: { type: "string" },
      dist: { type: "string", default: "dist" },
      out: { type: "string" },
      source: { type: "string", default: SOURCE },
      zstd: { type: "boolean", default: false },
      measure: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.version === undefined || values.revision === undefined) {
    console.error("usage: bun run oci/build.ts --version V --revision R [--dist DIR] [--out DIR] [--zstd] [--measure]");
    return 2;
  }
  const binaries: Record<string, Uint8Array> = {};
  for (const arch of ["amd64", "arm64"]) {
    const file = Bun.file(`${values.dist}/gardener-node-agent-linux-${arch}`);
    if (!(await file.exists())) {
      console.error(`oci: missing ${values.dist}/gardener-node-agent-linux-${arch} (run make build-all)`);
      return 1;
    }
    binaries[arch] = await file.bytes();
  }
  // Reproducible builds: SOURCE_DATE_EPOCH pins the only time-dependent field.
  const epoch = process.env["SOURCE_DATE_EPOCH"];
  const created = new Date(epoch !== undefined && /^\d+$/.test(epoch) ? Number(epoch) * 1000 : Date.now())
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z");
  const outDir = values.out ?? `${values.dist}/oci`;
  const result = await buildOciLayout({
    binaries,
    outDir,
    version: values.version,
    revision: values.revision,
    created,
    source: values.source,
    compression: values.zstd ? "zstd" : "gzip",
    measureOther: values.measure,
  });
  for (const l of result.layers) {
    const other = l.otherSize !== undefined ? `, ${l.compression === "gzip" ? "zstd-19" : "gzip-9"} would be ${mib(l.otherSize)}` : "";
    console.log(`layer linux/${l.architecture}: tar ${mib(l.tarSize)} → ${l.compression} ${mib(l.size)}${other}`);
  }
  console.log(`image index ${result.indexDigest} written to ${outDir}`);
  return 0;
}

function mib(n: number): string {
  return `${(n / 1048576).toFixed(1)} MiB`;
}

process.exit(await main());
