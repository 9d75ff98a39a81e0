import { describe, expect, test } from "bun:test";
import type { Kube } from "../../../kube/index.ts";
import { decodeOsc } from "../../../osc/index.ts";
import { registryAuthPath } from "../../../registry/index.ts";
import { pendingRegistryAuth, StagingError } from "./fetch.ts";

// Inline content: nothing is read from the API server.
const noKube = {} as Kube;
const oscWith = (permissions: number) =>
  decodeOsc(`
spec:
  files:
  - {path: ${registryAuthPath}, permissions: ${permissions}, content: {inline: {data: '{"auths":{}}'}}}
`);

describe("pendingRegistryAuth", () => {
  test("should hand out the pending version's credentials file when only its owner may access it", async () => {
    for (const mode of [0o600, 0o400, 0o700])
      expect(await pendingRegistryAuth(noKube, oscWith(mode), new AbortController().signal)).toBe('{"auths":{}}');
  });

  test("should refuse it as the host's file would be refused, naming the mode and never the content", async () => {
    for (const [mode, text] of [
      [0o644, "0644"],
      [0o640, "0640"],
      [0o601, "0601"],
    ] as const) {
      const err = await pendingRegistryAuth(noKube, oscWith(mode), new AbortController().signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StagingError);
      expect((err as Error).message).toBe(
        `file ${registryAuthPath}: mode ${text} gives group or others access to registry credentials, want 0600`,
      );
    }
  });
});
