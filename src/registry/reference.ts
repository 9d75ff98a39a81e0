import { quoteName } from "../untrusted/index.ts";
import { RegistryError } from "./errors.ts";
import type { ImageReference } from "./types.ts";

const DOCKER_HUB = "docker.io";
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const REPOSITORY = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

/**
 * Parses `host[:port]/repo[:tag][@sha256:…]` the way the Docker/containerd tooling does: the first
 * component is a registry only if it has a "." or ":" or is "localhost"; otherwise the image is on
 * Docker Hub, where single-component names get the "library/" prefix. No tag and no digest means
 * "latest"; with a digest the tag is kept for display only.
 */
export function parseImageReference(input: string): ImageReference {
  const fail = (why: string): never => {
    throw new RegistryError(`invalid image reference ${quoteName(input)}: ${why}`);
  };
  let rest = input.trim();
  if (rest === "") fail("empty");
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) fail("digest must be sha256:<64 hex>");
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) fail("bad tag");
  }
  const slash = rest.indexOf("/");
  const first = slash >= 0 ? rest.slice(0, slash) : "";
  let registry = DOCKER_HUB;
  let repository = rest;
  if (slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost")) {
    registry = first;
    repository = rest.slice(slash + 1);
  }
  if (registry === "index.docker.io" || registry === "registry-1.docker.io") registry = DOCKER_HUB;
  if (registry === DOCKER_HUB && !repository.includes("/")) repository = `library/${repository}`;
  if (!REPOSITORY.test(repository)) fail("bad repository name");
  if (tag === undefined && digest === undefined) tag = "latest";
  return { registry, repository, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** The host[:port] to talk to for a registry name (Docker Hub's API lives elsewhere). */
export function registryEndpoint(registry: string): string {
  return registry === DOCKER_HUB ? "registry-1.docker.io" : registry;
}

/** Canonical text of a reference, e.g. "127.0.0.1:5000/gna:v1@sha256:…". */
export function formatImageReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag !== undefined ? `:${ref.tag}` : ""}${ref.digest !== undefined ? `@${ref.digest}` : ""}`;
}
