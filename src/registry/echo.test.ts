import { describe, expect, test } from "bun:test";
import { createRegistryClient } from "./client.ts";
import { verifyDigest } from "./digest.ts";
import { FileNotInImageError } from "./extract.ts";
import { errorCodes } from "./error-body.ts";
import { parseHostsToml } from "./hosts.ts";
import { decompressLayer } from "./layer.ts";
import { parseManifest } from "./manifest.ts";
import { parseImageReference } from "./reference.ts";
import { findInTar } from "./tar.ts";
import { createTransport, type FetchFn } from "./transport.ts";
import { RegistryError } from "./errors.ts";

/**
 * Registry errors name the field, file, line or URL path — never a value out of a manifest, a
 * hosts.toml, a response body or a URL's query: any of those may hold a credential.
 */
const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";

/** Every message in the error and its causes. */
function messages(err: unknown): string {
  let text = "";
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) text += `${e.message}\n`;
  return text;
}

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a throw");
}

async function rejected(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err as Error,
  );
}

const json = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const digest = `sha256:${"a".repeat(64)}`;
const descriptor = { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest, size: 1 };

describe("parseManifest", () => {
  test.each([
    ["a body that is not JSON", new TextEncoder().encode(`{"layers": ${secret}}`), "manifest is not valid JSON"],
    [
      "a string for a size",
      json({ schemaVersion: 2, config: descriptor, layers: [{ ...descriptor, size: secret }] }),
      "invalid image manifest: layers.0.size: invalid type: expected number, got string",
    ],
    [
      "a bad digest",
      json({ schemaVersion: 2, config: { ...descriptor, digest: `sha256:${secret}` }, layers: [] }),
      "invalid image manifest: config.digest: invalid value (regex)",
    ],
    [
      "a string for the manifests",
      json({ schemaVersion: 2, manifests: secret }),
      "invalid image index: manifests: invalid type: expected array, got string",
    ],
  ])("should refuse %s naming the field, never the value", (_what, body, message) => {
    const err = thrown(() => parseManifest(body, null));
    expect(err).toBeInstanceOf(RegistryError);
    expect(err.message).toBe(message);
    expect(messages(err)).not.toContain(secret);
  });
});

describe("parseHostsToml", () => {
  test("should name the file, line and column of a TOML syntax error, not the line", () => {
    const err = thrown(() =>
      parseHostsToml(`server = "https://r"\n[host."https://m"]\n  ca = "${secret}\n`, "/etc/containerd/certs.d/r/hosts.toml"),
    );
    expect(err.message).toBe("/etc/containerd/certs.d/r/hosts.toml: invalid TOML at line 3, column 40");
    expect(messages(err)).not.toContain(secret);
  });

  test("should name the file and field of a type error, not the value", () => {
    const err = thrown(() =>
      parseHostsToml(`[host."https://m"]\n  override_path = "${secret}"\n  capabilities = ["${secret}"]\n`, "/d/hosts.toml"),
    );
    expect(err.message).toBe(
      '/d/hosts.toml: invalid hosts.toml: host.https://m.capabilities.0: invalid type: expected ("pull" | "resolve" | "push"), got string; host.https://m.override_path: invalid type: expected boolean, got string',
    );
    expect(messages(err)).not.toContain(secret);
  });
});

describe("errorCodes", () => {
  test.each([
    [
      "OCI error codes",
      `{"errors":[{"code":"UNAUTHORIZED","message":"${secret}","detail":{"x":"${secret}"}},{"code":"DENIED"}]}`,
      "UNAUTHORIZED, DENIED",
    ],
    ["an OAuth2 error", `{"error":"invalid_grant","error_description":"${secret}"}`, "invalid_grant"],
    ["a code that is free text", `{"errors":[{"code":"${secret} and more"}]}`, ""],
    ["an HTML page", `<html>${secret}</html>`, ""],
  ])("should keep only the codes of %s", (_what, body, codes) => {
    expect(errorCodes(body)).toBe(codes);
  });
});

describe("transport and client errors", () => {
  const fakeFetch =
    (answer: (url: URL) => Response): FetchFn =>
    async (input) =>
      answer(new URL(String(input)));

  test("should give the codes of a failed token request, not its body", async () => {
    const fetch = fakeFetch((url) =>
      url.pathname === "/token"
        ? new Response(`{"errors":[{"code":"UNAUTHORIZED","message":"bad password ${secret}"}]}`, { status: 401 })
        : new Response("", { status: 401, headers: { "www-authenticate": 'Bearer realm="https://r.example/token",service="r"' } }),
    );
    const err = await rejected(createTransport({ fetch }).send({ registry: "r.example", repository: "a/b", path: "/v2/a/b/manifests/x" }));
    expect(err.message).toBe("https://r.example/token: HTTP 401: token request failed (UNAUTHORIZED)");
    expect(messages(err)).not.toContain(secret);
  });

  test("should name the scheme of an unsupported challenge, not its parameters", async () => {
    const fetch = fakeFetch(() => new Response("", { status: 401, headers: { "www-authenticate": `Negotiate ${secret}` } }));
    const err = await rejected(createTransport({ fetch }).send({ registry: "r.example", repository: "a/b", path: "/v2/a/b/manifests/x" }));
    expect(err.message).toBe('https://r.example/v2/a/b/manifests/x: HTTP 401: unsupported auth scheme "other"');
    expect(messages(err)).not.toContain(secret);
  });

  test("should show a redirect target without its query (a pre-signed URL's signature)", async () => {
    const fetch = fakeFetch(
      (url) => new Response("", { status: 307, headers: { location: `https://store.example${url.pathname}?X-Amz-Signature=${secret}` } }),
    );
    const err = await rejected(
      createTransport({ fetch }).send({ registry: "r.example", repository: "a/b", path: "/v2/a/b/blobs/x", followRedirects: true }),
    );
    expect(err.message).toBe("https://store.example/v2/a/b/blobs/x: HTTP 307: too many redirects");
    expect(messages(err)).not.toContain(secret);
  });

  test("should show a mirror URL without its user info", async () => {
    const fetch = fakeFetch(() => new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="m"' } }));
    const endpoint = { url: `https://user:${secret}@m.example`, capabilities: ["pull" as const], overridePath: false };
    const err = await rejected(
      createTransport({ fetch }).send({ registry: "r.example", repository: "a/b", path: "/v2/a/b/manifests/x", endpoint }),
    );
    expect(err.message).toBe(
      "https://m.example/v2/a/b/manifests/x: HTTP 401: registry r.example wants basic auth and no credentials are configured",
    );
    expect(messages(err)).not.toContain(secret);
  });

  test("should give the codes of a failed manifest request, not its body", async () => {
    const fetch = fakeFetch(() => new Response(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"${secret}"}]}`, { status: 404 }));
    const err = await rejected(createRegistryClient({ fetch }).resolve("r.example/a/b:v1", { os: "linux", architecture: "amd64" }));
    expect(err.message).toBe("r.example/a/b:v1 manifest v1: HTTP 404: MANIFEST_UNKNOWN");
    expect(messages(err)).not.toContain(secret);
  });
});

describe("names in registry errors", () => {
  test.each([
    [
      "an image reference",
      () => parseImageReference(`r.example/a/b:${"x".repeat(200)}\n${secret}`),
      'invalid image reference "r.example/a/b:',
    ],
    ["a layer media type", () => decompressLayer(new Uint8Array(), `${"x".repeat(80)}${secret}`), 'unsupported layer media type "xxxx'],
    ["a digest", () => verifyDigest(new Uint8Array(), `md5:${"x".repeat(80)}${secret}`, "blob"), 'unsupported digest algorithm in "md5:'],
    [
      "a path in an image",
      () => {
        throw new FileNotInImageError("r.example/a:v1", `/${"p".repeat(90)}\n${secret}`, "absent");
      },
      `file "/${"p".repeat(76)}..." not found in image "r.example/a:v1"`,
    ],
  ])("should cut %s to 80 characters and escape it", (_what, f, start) => {
    const err = thrown(f);
    expect(err.message).toStartWith(start);
    expect(err.message).not.toContain(secret);
    expect(err.message).not.toContain("\n");
  });

  test("should not quote a bad numeric tar field", () => {
    const header = new Uint8Array(1024);
    header.set(new TextEncoder().encode("file"), 0);
    header.set(new TextEncoder().encode("sk-9xyz"), 148); // checksum field: not octal
    const err = thrown(() => findInTar(header, "file"));
    expect(err.message).toBe("tar header at 0 has a bad numeric field (not octal digits)");
    expect(err.message).not.toContain("sk-9xyz");
  });
});
