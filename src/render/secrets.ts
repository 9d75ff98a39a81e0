import * as v from "valibot";
import { parseAllDocuments } from "yaml";
import { RenderError } from "./errors.ts";
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
      throw new RenderError("invalid", path === null ? where : `${where}.${path}`, res.issues[0].message);
    }
    const s = res.output;
    const entry: Record<string, Uint8Array | string> = {};
    for (const [k, val] of Object.entries(s.data)) entry[k] = new Uint8Array(Buffer.from(val, "base64"));
    for (const [k, val] of Object.entries(s.stringData)) entry[k] = val;
    out[s.metadata.name] = entry;
  };
  parseAllDocuments(text).forEach((doc, i) => {
    if (!("errors" in doc) || doc.errors.length > 0) throw new RenderError("invalid", `secrets[${i}]`, "invalid YAML");
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) add(value, `secrets[${i}]`);
  });
  return out;
}
