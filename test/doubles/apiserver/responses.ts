/** JSON answers and request bodies of the simulated API. */
import { parse as parseYaml } from "yaml";
import { SimApiError } from "./status.ts";

const JSON_HEADERS = { "content-type": "application/json" };

export function jsonResponse(code: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status: code, headers: { ...JSON_HEADERS, ...headers } });
}

export function errorResponse(err: SimApiError): Response {
  return jsonResponse(err.code, err.toStatus(), err.headers);
}

/** Reads a JSON (or YAML) request body as unknown; malformed bodies are 400. */
export async function readBody(req: Request): Promise<unknown> {
  const text = await req.text();
  const ct = req.headers.get("content-type") ?? "";
  try {
    return ct.includes("yaml") ? parseYaml(text, { version: "1.1" }) : JSON.parse(text);
  } catch (err) {
    throw new SimApiError(400, "BadRequest", `error decoding request body: ${err instanceof Error ? err.message : String(err)}`);
  }
}
