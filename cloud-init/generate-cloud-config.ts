// Regenerates cloud-init/cloud-config.yaml.tmpl from init.sh and the provision OSC builder.
//   bun run cloud-init/generate-cloud-config.ts          write the template
//   bun run cloud-init/generate-cloud-config.ts --check  exit 1 when the committed template is stale
import { join } from "node:path";
import { renderCloudConfigTemplate } from "./cloud-config-template.ts";

export async function generate(check: boolean): Promise<number> {
  const dir = import.meta.dir;
  const target = join(dir, "cloud-config.yaml.tmpl");
  const want = renderCloudConfigTemplate(await Bun.file(join(dir, "init.sh")).text());
  if (check) {
    const have = (await Bun.file(target).exists()) ? await Bun.file(target).text() : "";
    if (have === want) return 0;
    process.stderr.write(`${target} is stale: run bun run cloud-init/generate-cloud-config.ts\n`);
    return 1;
  }
  await Bun.write(target, want);
  return 0;
}

if (import.meta.main) process.exit(await generate(process.argv.includes("--check")));
