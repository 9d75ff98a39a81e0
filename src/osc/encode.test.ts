import { describe, expect, test } from "bun:test";
import { decodeChanges, emptyChanges, encodeChanges, encodeChangesChunked, type OscChanges } from "./changes.ts";
import { decodeOsc } from "./decode.ts";
import { acceptanceOsc } from "../../test/fixtures/osc/acceptance-osc.ts";
import { encodeOsc, encodeOscChunked } from "./encode.ts";
import type { Osc } from "./schema.ts";
import { bigOscYaml } from "../../test/harness/big-osc.ts";

describe("encodeOsc", () => {
  test("should write apiVersion/kind, sorted keys and decimal permissions", () => {
    const osc = decodeOsc(
      "spec:\n  units:\n  - name: b\n    enable: false\n  files:\n  - path: /a\n    permissions: 0644\n    content:\n      inline:\n        encoding: b64\n        data: eA==\n",
    );
    expect(encodeOsc(osc)).toBe(
      [
        "apiVersion: extensions.gardener.cloud/v1alpha1",
        "kind: OperatingSystemConfig",
        "metadata: {}",
        "spec:",
        "  files:",
        "  - content:",
        "      inline:",
        "        data: eA==",
        "        encoding: b64",
        "    path: /a",
        "    permissions: 420",
        '  purpose: ""',
        '  type: ""',
        "  units:",
        "  - enable: false",
        "    name: b",
        "status: {}",
        "",
      ].join("\n"),
    );
  });

  test("should round-trip through decodeOsc", () => {
    const src =
      'spec:\n  criConfig:\n    name: containerd\n    containerd:\n      sandboxImage: p\n      plugins:\n      - path: [a, b]\n        values: {x: 1}\n  units:\n  - name: u\n    content: "a\\nb\\n"\n    dropIns:\n    - name: d\n      content: yes\nstatus:\n  extensionFiles:\n  - path: /x\n    hostName: h\n';
    const osc = decodeOsc(src);
    expect(decodeOsc(encodeOsc(osc))).toEqual(osc);
  });
});

const rich =
  "spec:\n  criConfig:\n    name: containerd\n    containerd:\n      sandboxImage: p\n      plugins:\n      - path: [a, b]\n        values: {x: 1, y: [true, null, 2.5], z: {w: ''}}\n  units:\n  - name: u\n    enable: true\n    content: \"a\\nb\\n\"\n    filePaths: [/a]\n    dropIns:\n    - name: d\n      content: yes\n  - name: v\n  files:\n  - path: /a\n    permissions: 0644\n    content:\n      inline: {encoding: b64, data: eA==}\n  - path: /b\n    content:\n      imageRef: {image: i, filePathInImage: /f}\nstatus:\n  extensionFiles:\n  - path: /x\n    hostName: h\n";

describe("encodeOscChunked's decoded form", () => {
  test.each([
    ["a small OSC with every kind of part", () => decodeOsc(rich)],
    ["the acceptance OSC", () => decodeOsc(JSON.stringify(acceptanceOsc()))],
  ])("should give exactly what decoding its own text gives for %s", (_, make) => {
    const osc = make();
    const { bytes } = chunkedOscBytes(osc);
    const text = bytes.toString("utf8");
    expect(text).toBe(encodeOsc(osc));
    expect(encodeOscChunked(osc).decoded).toStrictEqual(decodeOsc(text));
  });

  test("should not share objects with the OSC it encodes", () => {
    const osc = decodeOsc(rich);
    const { decoded } = encodeOscChunked(osc);
    expect(decoded.spec.units?.[0]).not.toBe(osc.spec.units?.[0] as NonNullable<unknown>);
    expect(decoded.spec.criConfig?.containerd?.plugins?.[0]).not.toBe(osc.spec.criConfig?.containerd?.plugins?.[0] as NonNullable<unknown>);
  });
});

/** The bytes encodeOscChunked pushes out (each chunk copied: the encoder reuses its buffer), and how many chunks. */
function chunkedOscBytes(osc: Osc): { readonly bytes: Buffer; readonly chunks: number } {
  const parts: Buffer[] = [];
  encodeOscChunked(osc).chunks.writeTo((chunk) => parts.push(Buffer.from(chunk)));
  return { bytes: Buffer.concat(parts), chunks: parts.length };
}

describe("encodeOscChunked", () => {
  const withContents = (contents: readonly string[]): Osc =>
    decodeOsc(
      JSON.stringify({
        spec: {
          units: [
            { name: "a.service", content: contents[0] ?? "", dropIns: [{ name: "d.conf", content: "[Unit]\nDescription=é ✓ 😀\n" }] },
          ],
          files: contents.map((data, i) => ({ path: `/etc/f-${i}`, permissions: 0o644, content: { inline: { data } } })),
        },
      }),
    );
  /** Past the 256 KiB buffer with every character 3 bytes (✓) or 4 (😀), shifted by 0–3 ASCII bytes: some character straddles each buffer end. */
  const straddling = (char: string) =>
    [0, 1, 2, 3].map((shift) => withContents([`${"a".repeat(shift)}${char.repeat(120_000)}`, `x\n${char.repeat(90_000)}\n`]));

  test.each([
    ["a small OSC with every kind of part", [decodeOsc(rich)]],
    ["the acceptance OSC", [decodeOsc(JSON.stringify(acceptanceOsc()))]],
    ["a big OSC (5 MB, base64 contents)", [decodeOsc(bigOscYaml(300, 2))]],
    ["non-ASCII single-line and multi-line contents", [withContents(["é", "日本語", "ü\nö\n", "a\u2028b", "€ 100", "x: é #y"])]],
    ["emoji (surrogate pairs)", [withContents(["😀", "hello 😀 world", "line one\nemoji 🎉 here\n"])]],
    ["a lone surrogate (written by the yaml package)", [withContents(["\uD83D alone", "ok"]), withContents(["line\n\uDE00\n"])]],
    ["3-byte characters across buffer ends", straddling("✓")],
    ["4-byte characters across buffer ends", straddling("😀")],
    ["2-byte characters across buffer ends", straddling("é")],
  ])("should push out encodeOsc's exact bytes and give what decoding them gives for %s", (_, oscs) => {
    for (const osc of oscs) {
      const { bytes } = chunkedOscBytes(osc);
      const text = encodeOsc(osc);
      expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
      expect(encodeOscChunked(osc).decoded).toStrictEqual(decodeOsc(text));
    }
  });

  test("should push a big OSC through the reused buffer in several chunks", () => {
    const { bytes, chunks } = chunkedOscBytes(decodeOsc(bigOscYaml(300, 2)));
    expect(chunks).toBeGreaterThan(bytes.length / (256 * 1024) - 1);
    expect(chunks).toBeLessThan(bytes.length / (128 * 1024));
  });

  test("should write the OSC as it was when encoded, not as it is when written", () => {
    const osc = withContents(["a\n", "b"]);
    const expected = encodeOsc(osc);
    const { chunks } = encodeOscChunked(osc);
    (osc.spec.files as { path: string }[]).splice(0, 1);
    (osc.spec.units?.[0] as { content?: string }).content = "changed";
    const parts: Buffer[] = [];
    chunks.writeTo((chunk) => parts.push(Buffer.from(chunk)));
    expect(Buffer.concat(parts).toString("utf8")).toBe(expected);
  });
});

describe("encodeOsc round trip of unusual strings", () => {
  test.each([
    ["leading and trailing spaces", "  x  "],
    ["trailing newlines", "a\n\n\n"],
    ["no trailing newline", "a\nb"],
    ["tabs and CR", "a\tb\r\nc"],
    ["YAML 1.1 booleans", "yes"],
    ["octal-looking", "0644"],
    ["comment and colon", "# a: b"],
    ["unicode", "ü → 🚀"],
    ["empty", ""],
    ["indentation indicator", "  indented\nnot"],
    ["document marker", "---\n..."],
  ])("should keep %s", (_n, content) => {
    const decoded = decodeOsc(JSON.stringify({ spec: { units: [{ name: "u", content, dropIns: [{ name: "d", content }] }] } }));
    const again = decodeOsc(encodeOsc(decoded));
    expect(again.spec.units?.[0]?.content).toBe(content);
    expect(again.spec.units?.[0]?.dropIns?.[0]?.content).toBe(content);
  });
});

describe("encodeChanges", () => {
  test("should write the all-empty document exactly like upstream", () => {
    expect(encodeChanges(emptyChanges("abc123"))).toBe(`containerd:
  configFileChanged: false
  registries: {}
files: {}
inPlaceUpdates:
  certificateAuthoritiesRotation:
    kubelet: false
    nodeAgent: false
  kubelet:
    config: false
    cpuManagerPolicy: false
    minorVersion: false
  operatingSystem: false
  serviceAccountKeyRotation: false
mustRestartNodeAgent: false
operatingSystemConfigChecksum: abc123
units: {}
`);
  });

  test("should always write dropInsChanges of a changed unit", () => {
    const c = emptyChanges("x");
    c.units.changed.push({ name: "a.service", enable: true, dropInsChanges: { changed: [], deleted: [] } });
    c.units.commands.push({ name: "a.service", command: "restart" });
    expect(encodeChanges(c)).toContain(
      "units:\n  changed:\n  - dropInsChanges: {}\n    enable: true\n    name: a.service\n  commands:\n  - command: restart\n    name: a.service\n",
    );
  });

  test("should read a Go-written file with missing sections", () => {
    const c = decodeChanges(
      "operatingSystemConfigChecksum: abc\nmustRestartNodeAgent: true\nunits:\n  changed:\n  - name: u\n    dropIns:\n    - name: d\n      content: c\n    dropInsChanges:\n      changed:\n      - name: d\n        content: c\n",
    );
    expect(c.operatingSystemConfigChecksum).toBe("abc");
    expect(c.mustRestartNodeAgent).toBe(true);
    expect(c.units.changed[0]?.dropInsChanges.changed).toEqual([{ name: "d", content: "c" }]);
    expect(c.units.changed[0]?.dropInsChanges.deleted).toEqual([]);
    expect(c.files.changed).toEqual([]);
    expect(c.containerd.registries.desired).toEqual([]);
  });

  test("should round-trip", () => {
    const c = emptyChanges("x");
    c.files.changed.push({ path: "/a", permissions: 420, content: { inline: { encoding: "", data: "a" } } });
    c.containerd.registries.upstreamsToProbe.push("r");
    expect(decodeChanges(encodeChanges(c))).toEqual(c);
  });
});

/** The bytes a chunked encoding pushes out (each chunk copied: the encoder reuses its buffer). */
function chunkedBytes(c: OscChanges): { readonly bytes: Buffer; readonly chunks: number } {
  const parts: Buffer[] = [];
  encodeChangesChunked(c).writeTo((chunk) => parts.push(Buffer.from(chunk)));
  return { bytes: Buffer.concat(parts), chunks: parts.length };
}

describe("encodeChangesChunked", () => {
  const withFiles = (contents: readonly string[], encoding = ""): OscChanges => {
    const c = emptyChanges("3a1e5b");
    for (const [i, data] of contents.entries())
      c.files.changed.push({ path: `/etc/f-${i}`, permissions: 420, content: { inline: { encoding, data } } });
    c.units.changed.push({
      name: "a.service",
      enable: true,
      content: "[Unit]\nDescription=é ✓\n",
      dropInsChanges: { changed: [], deleted: [] },
    });
    return c;
  };
  // Past the 256 KiB chunk: a multi-byte character lands on a chunk border somewhere. (A surrogate pair
  // in a multi-line string sends the whole document to the yaml package, as encodeChanges does.)
  const big = Array.from({ length: 40_000 }, (_, i) => `line ${i} é ✓ "q" 'a' #x: y`).join("\n");

  test.each([
    ["the all-empty document", emptyChanges("abc")],
    ["empty and single-line contents", withFiles(["", "a", "0644", "yes", "x: y", "- z", " lead", "trail "])],
    ["multi-line contents", withFiles(["a\nb\n", "a\nb", "#!/bin/sh\necho *\n", "a\n\n\nb\n", "x \ny"])],
    ["unicode", withFiles(["é", "😀", "a\u2028b", "ü\nö\n", "日本語\n"])],
    ["contents the fast writer leaves to the yaml package", withFiles(["x\u0001\ny", "  indented\nblock", "x\n\n", "a\n  "])],
    ["big contents", withFiles([big, `${big}\n`, "aGVsbG8=".repeat(100_000)], "b64")],
    ["big contents with a surrogate pair", withFiles([`${big}\n😀\n`])],
  ])("should write encodeChanges' bytes for %s", (_, c) => {
    const { bytes } = chunkedBytes(c);
    expect(bytes.equals(Buffer.from(encodeChanges(c)))).toBe(true);
    expect(decodeChanges(bytes.toString("utf8"))).toEqual(c);
  });

  test("should push a big change set in chunks of the reused buffer", () => {
    const { chunks } = chunkedBytes(withFiles([big, big, big]));
    expect(chunks).toBeGreaterThan(4);
  });

  test("should write the change set as it was when encoded, not as it is when written", () => {
    const c = withFiles(["a\n", "b\n"]);
    const expected = encodeChanges(c);
    const chunked = encodeChangesChunked(c);
    c.files.changed.splice(0, 1);
    c.mustRestartNodeAgent = true;
    const parts: Buffer[] = [];
    chunked.writeTo((chunk) => parts.push(Buffer.from(chunk)));
    expect(Buffer.concat(parts).toString("utf8")).toBe(expected);
  });
});
