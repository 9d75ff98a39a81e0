import * as v from "valibot";
import { parseAllDocuments } from "yaml";
import { RenderError } from "./errors.ts";
import { issueText } from "../untrusted/index.ts";
import { unsafeStructure, yamlErrorText } from "../config/index.ts";
import type { RenderSecrets } from "./content.ts";

const secretSchema = v.object({
  kind: v.literal("Secret"),
  metadata: v.object({ name: v.string() }),
  data: v.optional(v.record(v.string(), v.string()), {}),
  stringData: v.optional(v.record(v.string(), v.string()), {}),
});
const listSchema = v.object({ kind: v.literal("List"), items: v.array(v.unknown()) });

/**
 * Secrets for `secretRef` files from YAML/JSON text: Secret documents (`---` separated) or a v1 List
 * of them. `data` is base64, `stringData` plain and wins, as on the API server.
 */
export function parseRenderSecrets(text: string): RenderSecrets {
  const out: Record<string, Record<string, Uint8Array | string>> = {};
  const add = (doc: unknown, where: string): void => {
    const list = v.safeParse(listSchema, doc);
    if (list.success) {
      list.output.items.forEach((item, i) => {
        add(item, `${where}.items[${i}]`);
      });
      return;
    }
    const res = v.safeParse(secretSchema, doc);
    if (!res.success) {
      const path = v.getDotPath(res.issues[0]);
      // Never valibot's message: it quotes the value, and this file holds credentials.
      throw new RenderError("invalid", path === null ? where : `${where}.${path}`, issueText(res.issues[0]));
    }
    const s = res.output;
    const entry: Record<string, Uint8Array | string> = {};
    for (const [k, val] of Object.entries(s.data)) entry[k] = new Uint8Array(Buffer.from(val, "base64"));
    for (const [k, val] of Object.entries(s.stringData)) entry[k] = val;
    out[s.metadata.name] = entry;
  };
  // logLevel "error": the package would print warnings quoting keys to stderr.
  parseAllDocuments(text, { logLevel: "error" }).forEach((doc, i) => {
    if (!("errors" in doc)) throw new RenderError("invalid", `secrets[${i}]`, "invalid YAML");
    const first = doc.errors[0];
    if (first !== undefined) throw new RenderError("invalid", `secrets[${i}]`, `invalid YAML: ${yamlErrorText(first)}`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      if (err instanceof ReferenceError)
        throw new RenderError("invalid", `secrets[${i}]`, "invalid YAML: an alias is unresolvable or expands too often");
      throw err;
    }
    const unsafe = unsafeStructure(value);
    if (unsafe !== undefined) throw new RenderError("invalid", `secrets[${i}]`, `invalid YAML: ${unsafe}`);
    if (value !== null && value !== undefined) add(value, `secrets[${i}]`);
  });
  return out;
}
