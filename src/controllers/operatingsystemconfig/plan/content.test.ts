import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../kube/index.ts";
import type { Kube } from "../../../kube/index.ts";
import { decodeOsc, emptyChanges } from "../../../osc/index.ts";
import { computeChanges } from "./diff.ts";
import { planChanges } from "./content.ts";
import { OscInputError } from "./input-error.ts";
import { validateFilePath, validateUnitName } from "./names.ts";

const kube = (data: Record<string, string> | undefined) =>
  ({
    async get() {
      if (data === undefined) throw new ApiError(404, "NotFound", "not found");
      return { metadata: {}, data };
    },
  }) as unknown as Kube;
const signal = new AbortController().signal;
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

describe("validateFilePath", () => {
  test.each([["/a"], ["/a/b.c"], ["/a/..b"]])("should accept %p", (p) => {
    expect(() => validateFilePath(p)).not.toThrow();
  });
  test.each([["a"], [""], ["/a/../b"], ["/./a"], ["/a/"], ["/.."]])("should reject %p", (p) => {
    expect(() => validateFilePath(p)).toThrow(OscInputError);
  });
});

describe("validateUnitName", () => {
  test.each([[""], ["."], [".."], ["a/b"], ["../x.service"]])("should reject %p", (n) => {
    expect(() => validateUnitName(n)).toThrow(OscInputError);
  });
  test("should accept a unit name", () => {
    expect(() => validateUnitName("kubelet.service")).not.toThrow();
  });
});

describe("planChanges", () => {
  test("should resolve inline and secretRef bytes and skip imageRef files", async () => {
    const c = emptyChanges("s");
    c.files.changed.push(
      { path: "/a", content: { inline: { encoding: "b64", data: "YQ==" } } },
      { path: "/b", content: { secretRef: { name: "s", dataKey: "k" } } },
      { path: "/c", content: { imageRef: { image: "i", filePathInImage: "/c" } } },
    );
    const planned = await planChanges(kube({ k: btoa("secret-b") }), c, "amd64", signal);
    expect(text(planned.get("/a"))).toBe("a");
    expect(text(planned.get("/b"))).toBe("secret-b");
    expect(planned.has("/c")).toBe(false);
  });

  test.each([
    ["a missing key", { other: btoa("x") }, 'secret "s" does not contain key "k"'],
    ["a missing secret", undefined, 'secret "s" not found'],
  ])("should fail on %s naming the file", async (_n, data, message) => {
    const c = emptyChanges("s");
    c.files.changed.push({ path: "/b", content: { secretRef: { name: "s", dataKey: "k" } } });
    const err = await planChanges(kube(data), c, "amd64", signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OscInputError);
    expect((err as OscInputError).subject).toBe("/b");
    expect((err as Error).message).toContain(message);
  });

  test("should hand plain inline text to the writer as it is and decode base64 only when the writer asks", async () => {
    const c = emptyChanges("s");
    c.files.changed.push(
      { path: "/plain", content: { inline: { encoding: "", data: "h\u00e9 \n" } } },
      { path: "/b64", content: { inline: { encoding: "b64", data: "YWJj\r\nZA==" } } },
      { path: "/ref", content: { secretRef: { name: "s", dataKey: "k" } } },
    );
    const planned = await planChanges(kube({ k: btoa("r") }), c, "amd64", signal);
    expect(planned.write("/plain")?.data).toBe("h\u00e9 \n");
    const b64 = planned.write("/b64")?.data;
    expect(typeof b64).toBe("function");
    expect(text(typeof b64 === "function" ? b64() : undefined)).toBe("abcd");
    expect(text(planned.get("/plain"))).toBe("h\u00e9 \n");
    expect(text(planned.write("/ref")?.data as Uint8Array)).toBe("r");
    expect(planned.write("/missing")).toBeUndefined();
  });

  test("should decode base64 into a buffer that the next file reuses once the first is written", async () => {
    const c = emptyChanges("s");
    c.files.changed.push(
      { path: "/a", content: { inline: { encoding: "b64", data: btoa("first file") } } },
      { path: "/b", content: { inline: { encoding: "b64", data: btoa("second") } } },
      { path: "/c", content: { inline: { encoding: "b64", data: btoa("third, while /b is in flight") } } },
    );
    const planned = await planChanges(kube({}), c, "amd64", signal);
    const produce = (path: string) => {
      const w = planned.write(path);
      if (typeof w?.data !== "function") throw new Error(`${path}: no decoder`);
      return { bytes: w.data(), written: () => w.written?.() };
    };
    const a = produce("/a");
    expect(text(a.bytes)).toBe("first file");
    a.written();
    const b = produce("/b");
    expect(text(b.bytes)).toBe("second");
    expect(b.bytes.buffer).toBe(a.bytes.buffer);
    // Not written yet: the next file gets a buffer of its own, /b's bytes stay as they are.
    const third = produce("/c");
    expect(text(third.bytes)).toBe("third, while /b is in flight");
    expect(third.bytes.buffer).not.toBe(b.bytes.buffer);
    expect(text(b.bytes)).toBe("second");
  });

  test.each([
    ["invalid base64", { encoding: "b64", data: "YQ=x" }, 'file "/bad": illegal base64 data at input byte 3'],
    ["an unknown encoding", { encoding: "gzip", data: "x" }, 'file "/bad"'],
  ])("should reject %s at planning, before anything is written", async (_n, inline, message) => {
    const c = emptyChanges("s");
    c.files.changed.push({ path: "/bad", content: { inline } });
    const err = await planChanges(kube({}), c, "amd64", signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OscInputError);
    expect((err as Error).message).toContain(message);
  });

  test("should reject a drop-in name that leaves the drop-in directory", async () => {
    const c = emptyChanges("s");
    c.units.changed.push({
      name: "u.service",
      dropIns: [{ name: "../../evil", content: "" }],
      dropInsChanges: { changed: [], deleted: [] },
    });
    await expect(planChanges(kube({}), c, "amd64", signal)).rejects.toThrow('invalid drop-in name "../../evil"');
  });

  test("should refuse inline content for the agent binary that is not an executable for this machine", async () => {
    const c = emptyChanges("s");
    c.files.changed.push({ path: "/opt/bin/gardener-node-agent", content: { inline: { encoding: "", data: "#!/bin/sh" } } });
    await expect(planChanges(kube({}), c, "amd64", signal)).rejects.toThrow("not an executable for amd64");
  });
});

describe("planChanges of large content", () => {
  test("should decode an inline file of more than 10 M base64 characters read from osc.yaml", async () => {
    const bytes = new Uint8Array(7_600_000).map((_, i) => (i * 7) & 0xff);
    const data = Buffer.from(bytes).toString("base64");
    expect(data.length).toBeGreaterThan(10_000_000);
    const osc = decodeOsc(
      `spec:\n  files:\n  - path: /var/lib/big\n    content:\n      inline:\n        encoding: b64\n        data: ${data}\n`,
    );
    const planned = await planChanges(kube({}), computeChanges(undefined, osc, "s", "host"), "amd64", signal);
    expect(Buffer.from(planned.get("/var/lib/big") ?? new Uint8Array()).equals(Buffer.from(bytes))).toBe(true);
  });
});
