/** Turns a request URL and method into kube's RequestInfo (verb, group, resource, namespace, name, subresource). */
import type { ResourceDef } from "./resources.ts";
import { findDefByPath } from "./resources.ts";

export interface RequestInfo {
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  /** The served resource, when the simulator knows it. */
  readonly def: ResourceDef | undefined;
  /** Extra path segments beyond resource/name/subresource (a 404). */
  readonly extra: boolean;
}

const NAMESPACE_SUBRESOURCES = ["status", "finalize"];

function isTrue(v: string | null): boolean {
  return v === "true" || v === "1";
}

export function requestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  const nonResource: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiGroup: "",
    apiVersion: "",
    resource: "",
    subresource: "",
    namespace: "",
    name: "",
    def: undefined,
    extra: false,
  };
  let rest: string[];
  let group = "";
  let version: string;
  if (parts[0] === "api" && parts.length >= 3) {
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else return nonResource;

  let namespace = "";
  if (rest[0] === "namespaces" && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.includes(rest[2]!)) rest = rest.slice(2);
  }
  const resource = rest[0] ?? "";
  let name = rest[1] ?? "";
  const subresource = rest[2] ?? "";
  let verb: string;
  switch (method) {
    case "POST":
      verb = "create";
      break;
    case "PUT":
      verb = "update";
      break;
    case "PATCH":
      verb = "patch";
      break;
    case "DELETE":
      verb = name === "" ? "deletecollection" : "delete";
      break;
    case "GET":
    case "HEAD":
      verb = name !== "" ? "get" : isTrue(url.searchParams.get("watch")) ? "watch" : "list";
      break;
    default:
      verb = "";
  }
  if (verb === "list" || verb === "watch") {
    // a list/watch pinned to one name by field selector is authorised as a request for that name
    const fs = url.searchParams.get("fieldSelector") ?? "";
    for (const term of fs.split(/(?<!\\),/)) {
      const m = /^metadata\.name(==|=)(.+)$/.exec(term.trim());
      if (m && /^[^/%]+$/.test(m[2]!) && m[2] !== "." && m[2] !== "..") name = m[2]!;
    }
  }
  return {
    isResourceRequest: true,
    path,
    verb,
    apiGroup: group,
    apiVersion: version,
    resource,
    subresource,
    namespace,
    name,
    def: findDefByPath(group, version, resource),
    extra: rest.length > 3,
  };
}
