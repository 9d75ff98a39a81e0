/**
 * Generators for the bad-input fuzz test: a seeded PRNG, agent configs and OSC documents with
 * secret-looking content planted where content goes (file and unit contents, values of the wrong
 * type, lines that break the YAML), never in names or paths, which errors do quote.
 */

export function mulberry32(start: number): () => number {
  let a = start;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rnd = () => number;
const pick = <T>(rnd: Rnd, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
const chance = (rnd: Rnd, p: number): boolean => rnd() < p;
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** A credential-looking token, unique enough never to occur in a message by accident. */
export const secretToken = (rnd: Rnd): string => `tok${Array.from({ length: 24 }, () => pick(rnd, [...alnum])).join("")}`;

/** A value of some type other than the one expected, holding the secret where it can. */
const wrongValue = (rnd: Rnd, s: string): unknown => pick(rnd, [s, [s], { k: s }, 12345, -1, 1.5, true, null, [], {}, [[s]], { k: [s] }]);

/** Text mutations that break or bend the YAML, each planting the secret near the damage. */
function corrupt(rnd: Rnd, text: string, s: string): string {
  const lines = text.split("\n");
  const at = Math.floor(rnd() * lines.length);
  switch (Math.floor(rnd() * 10)) {
    case 0:
      lines.splice(at, 0, `  bad: "${s}`);
      break;
    case 1:
      lines.splice(at, 0, `${s}: [${s}`);
      break;
    case 2:
      lines[at] = `${lines[at] ?? ""} ${s}: x`;
      break;
    case 3:
      lines.splice(at, 0, `\t${s}: 1`);
      break;
    case 4:
      lines.splice(at, 0, `x: &a [*a, ${s}]`);
      break;
    case 5:
      lines.splice(at, 0, `? [${s}]`, ": 1");
      break;
    case 6:
      lines.splice(at, 0, `x: !!binary ${s}`);
      break;
    case 7:
      lines.splice(at, 0, `x: ${"[".repeat(300)}${s}${"]".repeat(300)}`);
      break;
    case 8:
      lines.splice(at, 0, `x: *${s}`);
      break;
    default:
      // Cut anywhere; the secret starts a line of its own (glued to a name it would be a name, which errors do quote).
      return `${text.slice(0, Math.floor(rnd() * text.length))}\n${s}: [`;
  }
  return lines.join("\n");
}

/** Block-style YAML with JSON-quoted scalars: the `yaml` package's stringify would cost most of the run. */
function toYaml(value: unknown, indent = ""): string {
  const scalar = (v: unknown): string => (typeof v === "string" ? JSON.stringify(v) : v === undefined ? "null" : JSON.stringify(v));
  const isCollection = (v: unknown): v is object => typeof v === "object" && v !== null && Object.keys(v).length > 0;
  if (Array.isArray(value)) {
    return value.map((v) => (isCollection(v) ? `${indent}-\n${toYaml(v, `${indent}  `)}` : `${indent}- ${scalar(v)}\n`)).join("");
  }
  if (isCollection(value)) {
    return Object.entries(value)
      .map(([k, v]) =>
        isCollection(v) ? `${indent}${JSON.stringify(k)}:\n${toYaml(v, `${indent}  `)}` : `${indent}${JSON.stringify(k)}: ${scalar(v)}\n`,
      )
      .join("");
  }
  return `${indent}${scalar(value)}\n`;
}

// ---- configs ----

export function randomConfig(rnd: Rnd, s: string): string {
  const doc: Record<string, unknown> = {
    apiVersion: "nodeagent.config.gardener.cloud/v1alpha1",
    kind: "NodeAgentConfiguration",
    clientConnection: { qps: 50, burst: 100 },
    // Bad string values carry the secret: validation names the field, never the value.
    logLevel: chance(rnd, 0.9) ? pick(rnd, ["info", "debug", ""]) : pick(rnd, ["verbose", `verbose-${s}`]),
    server: {
      healthProbes: {
        bindAddress: chance(rnd, 0.9)
          ? pick(rnd, ["", "127.0.0.1", "::1", "localhost"])
          : pick(rnd, ["host name", "a:1", "0o777", "999.1.1.1", `${s} x`]),
        port: chance(rnd, 0.9) ? pick(rnd, [0, 2751, 65535]) : pick(rnd, [70000, -5]),
      },
      metrics: { port: 2752 },
    },
    apiServer: { server: "https://api", caFile: "/ca.crt" },
    featureGates: chance(rnd, 0.2) ? { AllAlpha: true } : undefined,
    controllers: {
      operatingSystemConfig: {
        secretName: "osc",
        kubernetesVersion: chance(rnd, 0.9) ? pick(rnd, ["v1.33.0", "1.34"]) : pick(rnd, ["1.20.0", `1.20.0-${s}`]),
        syncPeriod: chance(rnd, 0.9) ? pick(rnd, ["10m", "1h"]) : "1s",
      },
      token: { syncConfigs: [{ secretName: "t", path: "/t" }], syncPeriod: "1h" },
    },
  };
  // Replace a few non-string values (structs, numbers, durations, booleans) by values of other types.
  const slots: Array<[Record<string, any>, string]> = [
    [doc, "clientConnection"],
    [doc, "server"],
    [doc, "apiServer"],
    [doc, "controllers"],
    [doc, "featureGates"],
    [doc["clientConnection"] as Record<string, any>, "qps"],
    [doc["clientConnection"] as Record<string, any>, "burst"],
    [(doc["server"] as Record<string, any>)["healthProbes"], "port"],
    [(doc["controllers"] as Record<string, any>)["operatingSystemConfig"], "syncPeriod"],
    [(doc["controllers"] as Record<string, any>)["token"], "syncConfigs"],
    [(doc["controllers"] as Record<string, any>)["token"], "syncPeriod"],
  ];
  const mutations = Math.floor(rnd() * 3);
  for (let i = 0; i < mutations; i++) {
    const [obj, key] = pick(rnd, slots);
    obj[key] = wrongValue(rnd, s);
  }
  const text = chance(rnd, 0.15) ? JSON.stringify(doc) : toYaml(doc);
  return chance(rnd, 0.3) ? corrupt(rnd, text, s) : text;
}

// ---- OSC documents ----

const goodPaths = ["/etc/a.conf", "/etc/b.conf", "/opt/bin/tool", "/var/lib/x/y", "/var/lib/x/z", "/etc/systemd/system/k.conf"];
const badPaths = [
  "relative",
  "/a/../b",
  "/etc/",
  "/etc/escape/f",
  "/etc/file-parent/x",
  "/etc/dir-target",
  "/opt/bin/gardener-node-agent",
  `/${"n".repeat(240)}`,
];
const goodUnits = ["kubelet.service", "containerd.service", "a@.service", "a@b.service", "c.socket", "ok.timer"];
const badUnits = ["foo", "@.service", "\n.service", "x.conf", `${"u".repeat(300)}.service`, "esc.service"];
const dropInPool = ["10-a.conf", "20-b.conf", "drop", "10-a.conf", "20-b.conf", "drop", "../evil", "", "a\nb"];
const encodings = ["", "b64", "b64", "gzip"];

function randomContent(rnd: Rnd, s: string): unknown {
  switch (Math.floor(rnd() * 12)) {
    case 0:
      return { inline: { data: `${s}\n` } };
    case 1: {
      const enc = pick(rnd, encodings);
      const data =
        enc === "b64" && chance(rnd, 0.6) ? Buffer.from(`password=${s}`).toString("base64") : `${s}${pick(rnd, ["", "!", "==", "="])}`;
      return { inline: { encoding: enc, data } };
    }
    case 2:
      return { secretRef: { name: pick(rnd, ["present", "absent", "broken"]), dataKey: pick(rnd, ["k", "missing"]) } };
    case 3:
      return { imageRef: { image: "img", filePathInImage: "/f" } };
    case 4:
      return wrongValue(rnd, s);
    default:
      return { inline: { encoding: "b64", data: Buffer.from(`password=${s}`).toString("base64") } };
  }
}

export function randomOsc(rnd: Rnd, s: string): string {
  const files = Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => {
    const f: Record<string, unknown> = { path: pick(rnd, chance(rnd, 0.9) ? goodPaths : badPaths), content: randomContent(rnd, s) };
    if (chance(rnd, 0.6)) f["permissions"] = pick(rnd, [0o644, 0o755, 0o600, 0o4755, 0o17777, 0xffffffff]);
    if (chance(rnd, 0.03)) f["permissions"] = pick(rnd, [-1, 2 ** 33, 1.5, wrongValue(rnd, s)]);
    return f;
  });
  const units = Array.from({ length: Math.floor(rnd() * 4) }, () => {
    const u: Record<string, unknown> = {
      name: pick(rnd, chance(rnd, 0.9) ? goodUnits : badUnits),
      content: `[Service]\nEnvironment=TOKEN=${s}\n`,
    };
    if (chance(rnd, 0.5)) u["dropIns"] = [{ name: pick(rnd, dropInPool), content: `TOKEN=${s}` }];
    if (chance(rnd, 0.3)) u["enable"] = chance(rnd, 0.1) ? wrongValue(rnd, s) : chance(rnd, 0.5);
    if (chance(rnd, 0.03)) u["dropIns"] = wrongValue(rnd, s);
    return u;
  });
  const doc: Record<string, unknown> = {
    apiVersion: "extensions.gardener.cloud/v1alpha1",
    kind: "OperatingSystemConfig",
    spec: { files, units },
  };
  if (chance(rnd, 0.05)) doc["spec"] = wrongValue(rnd, s);
  const text = chance(rnd, 0.1) ? JSON.stringify(doc) : toYaml(doc);
  return chance(rnd, 0.2) ? corrupt(rnd, text, s) : text;
}
