import { describe, expect, test } from "bun:test";
import { findInTar } from "./tar.ts";

const enc = new TextEncoder();

/** A raw tar header + data; `type` and `name` as given, checksum computed. */
function entry(name: string, data: string, type = "0", mode = 0o644, extra: (h: Uint8Array) => void = () => {}): Uint8Array {
  const h = new Uint8Array(512);
  h.set(enc.encode(name).subarray(0, 100), 0);
  h.set(enc.encode(`${mode.toString(8).padStart(7, "0")}\0`), 100);
  h.set(enc.encode(`${enc.encode(data).length.toString(8).padStart(11, "0")}\0`), 124);
  h.set(enc.encode("00000000000\0"), 136);
  h[156] = type.charCodeAt(0);
  h.set(enc.encode("ustar\0"), 257);
  extra(h);
  h.set(enc.encode("        "), 148);
  const sum = h.reduce((a, b) => a + b, 0);
  h.set(enc.encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
  const body = new Uint8Array(Math.ceil(enc.encode(data).length / 512) * 512);
  body.set(enc.encode(data));
  return new Uint8Array([...h, ...body]);
}
const tar = (...entries: Uint8Array[]) => new Uint8Array([...entries.flatMap((e) => [...e]), ...new Uint8Array(1024)]);
const pax = (records: Record<string, string>) =>
  Object.entries(records)
    .map(([k, v]) => {
      const body = ` ${k}=${v}\n`;
      let len = body.length + 1;
      while (`${len}${body}`.length !== len) len++;
      return `${len}${body}`;
    })
    .join("");

describe("findInTar", () => {
  const long = `${"d".repeat(120)}/gardener-node-agent`;
  test.each([
    ["a ./-prefixed name", tar(entry("./gardener-node-agent", "x", "0", 0o755)), "/gardener-node-agent", "x", 0o755],
    ["a GNU long name", tar(entry("././@LongLink", long, "L"), entry("truncated", "long")), `/${long}`, "long", 0o644],
    ["a pax path", tar(entry("PaxHeaders/x", pax({ path: long }), "x"), entry("short", "pax")), `/${long}`, "pax", 0o644],
    [
      "a ustar prefix",
      tar(entry("file", "pre", "0", 0o600, (h) => h.set(enc.encode("usr/local/bin"), 345))),
      "/usr/local/bin/file",
      "pre",
      0o600,
    ],
    ["the last of duplicate entries", tar(entry("f", "one"), entry("f", "two")), "/f", "two", 0o644],
  ])("should find a file by %s", (_, archive, path, content, mode) => {
    const found = findInTar(archive, path);
    expect(found.kind).toBe("file");
    if (found.kind === "file") {
      expect(new TextDecoder().decode(found.data)).toBe(content);
      expect(found.mode).toBe(mode);
    }
  });

  test("should report symlinks and directories as not regular", () => {
    expect(findInTar(tar(entry("f", "", "2")), "/f")).toEqual({ kind: "not-regular", type: "2" });
    expect(findInTar(tar(entry("d/", "", "5")), "/d")).toEqual({ kind: "not-regular", type: "5" });
  });

  test("should report whiteouts and opaque parents", () => {
    expect(findInTar(tar(entry("etc/.wh.x", "")), "/etc/x")).toEqual({ kind: "whiteout" });
    expect(findInTar(tar(entry("etc/.wh..wh..opq", "")), "/etc/x")).toEqual({ kind: "whiteout" });
    expect(findInTar(tar(entry("etc/.wh..wh..opq", ""), entry("etc/x", "new")), "/etc/x").kind).toBe("file");
    expect(findInTar(tar(entry("other", "")), "/etc/x")).toEqual({ kind: "absent" });
  });

  test("should reject data that is not a tar", () => {
    expect(() => findInTar(new Uint8Array(1024).fill(7), "/x")).toThrow(/bad (checksum|numeric field)/);
  });
});
