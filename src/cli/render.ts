import initScriptTemplate from "../../cloud-init/init.sh" with { type: "text" };
import type { Command, CommandContext } from "./command.ts";
import { UsageError } from "./errors.ts";
import { readInputFile } from "./input-file.ts";

const readText = async (path: string, what: string): Promise<string> => new TextDecoder().decode(await readInputFile(path, what));

const need = (ctx: CommandContext, name: string): string => {
  const value = ctx.flags[name] ?? "";
  if (value === "") throw new UsageError(`--provision needs --${name}`);
  return value;
};

/**
 * `gardener-node-agent render --osc osc.yaml [--format bash|cloud-config] [--secrets secrets.yaml]` prints the
 * user data of a provision OSC; `render --provision --server … --ca-file … --image … --secret-name …
 * --kubernetes-version …` builds the node-init OSC first (spec §3) and prints its user data, with the
 * `<<BOOTSTRAP_TOKEN>>` and `<<MACHINE_NAME>>` placeholders left for machine-controller-manager.
 */
export const command: Command = {
  name: "render",
  summary: "Render a provision OperatingSystemConfig into a user-data script",
  usage: [
    "render [--format bash|cloud-config|gzip] [--secrets FILE] FILE   user data of a provision OSC (FILE '-' = stdin; or --osc FILE)",
    "render --provision --server URL --ca-file FILE --image REF --secret-name NAME --kubernetes-version V",
    "       [--kubelet-data-volume-size BYTES] [--agent-version V] [--registry-ca] [--cosign-key FILE]",
    "       [--format cloud-config|gzip|bash]",
  ].join("\n"),
  flags: [
    {
      name: "osc",
      kind: "string",
      default: "",
      usage: "provision OperatingSystemConfig (YAML or JSON), '-' for stdin; also the bare argument",
      positional: true,
    },
    {
      name: "format",
      kind: "string",
      default: "",
      usage: "bash, cloud-config or gzip (binary, smallest; default: bash, with --provision cloud-config)",
    },
    { name: "secrets", kind: "string", default: "", usage: "Secrets (YAML documents or a List) for secretRef files" },
    { name: "provision", kind: "bool", default: "false", usage: "render the node-init OSC built from the flags below" },
    { name: "server", kind: "string", default: "", usage: "shoot API server URL as the node reaches it" },
    { name: "ca-file", kind: "string", default: "", usage: "cluster CA bundle (PEM) of the API server" },
    { name: "image", kind: "string", default: "", usage: "agent image reference pulled by init.sh" },
    { name: "secret-name", kind: "string", default: "", usage: "name of the reconcile OSC secret in kube-system" },
    { name: "kubernetes-version", kind: "string", default: "", usage: "Kubernetes version of the worker pool" },
    { name: "kubelet-data-volume-size", kind: "string", default: "", usage: "kubelet data volume size in bytes" },
    { name: "agent-version", kind: "string", default: "", usage: "version naming the config file (default: this build)" },
    { name: "registry-ca", kind: "bool", default: "false", usage: "init.sh installs the registry CA from the API server first" },
    {
      name: "cosign-key",
      kind: "string",
      default: "",
      usage: "cosign public key (PEM): written to the node, init.sh installs only images signed by it",
    },
  ],
  async run(ctx: CommandContext): Promise<number> {
    const render = await import("../render/index.ts");
    const provision = ctx.flags["provision"] === "true";
    const format = ctx.flags["format"] || (provision ? "cloud-config" : "bash");
    if (format !== "bash" && format !== "cloud-config" && format !== "gzip") {
      throw new UsageError(`--format must be bash, cloud-config or gzip, not "${format}"`);
    }

    if (provision) {
      const size = ctx.flags["kubelet-data-volume-size"] ?? "";
      if (size !== "" && !/^[1-9][0-9]*$/.test(size)) throw new UsageError("--kubelet-data-volume-size must be a byte count");
      const osc = render.buildProvisionOsc({
        server: need(ctx, "server"),
        caBundle: await readText(need(ctx, "ca-file"), "CA file"),
        image: need(ctx, "image"),
        initScript: initScriptTemplate,
        secretName: need(ctx, "secret-name"),
        kubernetesVersion: need(ctx, "kubernetes-version"),
        version: ctx.flags["agent-version"] || ctx.version,
        kubeletDataVolumeSize: size === "" ? undefined : Number(size),
        registryCa: ctx.flags["registry-ca"] === "true",
        cosignPublicKey: ctx.flags["cosign-key"] ? await readText(ctx.flags["cosign-key"], "cosign key file") : undefined,
      });
      ctx.stdout.write(format === "gzip" ? render.renderUserDataGzip(osc) : render.renderUserData(osc, { format, packed: true }));
      return 0;
    }

    const oscPath = ctx.flags["osc"] ?? "";
    if (oscPath === "") throw new UsageError("render needs an OSC file: render [--format bash|cloud-config] FILE (or --provision)");
    const { decodeOsc } = await import("../osc/index.ts");
    const text = oscPath === "-" ? await new Response(Bun.stdin.stream()).text() : await readText(oscPath, "OSC file");
    const secretsPath = ctx.flags["secrets"] ?? "";
    const secrets = secretsPath === "" ? {} : render.parseRenderSecrets(await readText(secretsPath, "secrets file"));
    const osc = decodeOsc(text);
    ctx.stdout.write(format === "gzip" ? render.renderUserDataGzip(osc, secrets) : render.renderUserData(osc, { format, secrets }));
    return 0;
  },
};
