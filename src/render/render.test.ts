import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import type { Osc } from "../osc/index.ts";
import { RenderError } from "./errors.ts";
import { renderUserData } from "./render.ts";

const base = (spec: Partial<Osc["spec"]>): Osc => ({ spec: { type: "", purpose: "provision", ...spec }, status: {} }) as Osc;
const file = (path: string, content: Record<string, unknown>, permissions?: number) =>
  ({ path, content, ...(permissions === undefined ? {} : { permissions }) }) as NonNullable<Osc["spec"]["files"]>[number];

const errorOf = (fn: () => unknown): RenderError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof RenderError) return e;
    throw e;
  }
  throw new Error("expected a RenderError");
};

describe("renderUserData", () => {
  describe("should reject an invalid OSC naming the field", () => {
    test.each([
      [
        "an unknown encoding",
        file("/a", { inline: { encoding: "gzip", data: "x" } }),
        'spec.files[0].content.inline.encoding: invalid file codec id: expected "" or "b64"',
      ],
      [
        "invalid base64",
        file("/a", { inline: { encoding: "b64", data: "not base64!" } }),
        "spec.files[0].content.inline.data: illegal base64 data at input byte 3",
      ],
      [
        "an imageRef file",
        file("/a", { imageRef: { image: "img", filePathInImage: "/x" } }),
        "spec.files[0].content.imageRef: imageRef files cannot be rendered into user data",
      ],
      ["a file without content", file("/a", {}), "spec.files[0].content: one of inline or secretRef is required"],
      [
        "a relative path",
        file("relative/a", { inline: { encoding: "", data: "x" } }),
        'spec.files[0].path: path "relative/a" is not absolute',
      ],
      [
        "a path with a quote",
        file('/a"b', { inline: { encoding: "", data: "x" } }),
        'spec.files[0].path: path "/a\\"b" contains a quote, $, backtick, backslash or newline',
      ],
      [
        "a long path with a newline",
        file(`/${"a".repeat(100)}\nc2VjcmV0LXRva2VuLTk4NzY1NDMyMTA`, { inline: { encoding: "", data: "x" } }),
        `spec.files[0].path: path "/${"a".repeat(76)}..." contains a quote, $, backtick, backslash or newline`,
      ],
      [
        "unencoded content with an EOF line",
        file("/a", { inline: { encoding: "", data: "x\nEOF\ny" }, transmitUnencoded: true }),
        'spec.files[0].content: unencoded content must not contain a line "EOF"',
      ],
    ])("for %s", (_name, f, message) => {
      expect(errorOf(() => renderUserData(base({ files: [f] }), { format: "bash" })).message).toBe(message);
    });

    test("for a unit name with a quote", () => {
      const err = errorOf(() => renderUserData(base({ units: [{ name: "a'b.service" }] as Osc["spec"]["units"] }), { format: "bash" }));
      expect(err.field).toBe("spec.units[0].name");
    });

    test("for a reconcile OSC", () => {
      expect(errorOf(() => renderUserData(base({ purpose: "reconcile" }), { format: "bash" })).field).toBe("spec.purpose");
    });
  });

  test("should treat a missing data key of an existing secret as empty content", () => {
    const out = renderUserData(base({ files: [file("/a", { secretRef: { name: "s", dataKey: "missing" } })] }), {
      format: "bash",
      secrets: { s: { other: "x" } },
    });
    expect(out).toContain('cat << EOF | base64 -d > "/a"\n\nEOF');
  });

  test("should render an empty OSC into the bare activation skeleton", () => {
    expect(renderUserData(base({}), { format: "bash" })).toBe(
      [
        "#!/bin/bash",
        'if [ -f "/var/lib/osc/provision-osc-applied" ]; then',
        '  echo "Provision OSC already applied, exiting..."',
        "  exit 0",
        "fi",
        "",
        "",
        "",
        "systemctl daemon-reload",
        "",
        "",
        "mkdir -p /var/lib/osc",
        "touch /var/lib/osc/provision-osc-applied",
        "",
      ].join("\n"),
    );
  });

  describe("cloud-config format", () => {
    const o = base({
      files: [
        file("/etc/a.conf", { inline: { encoding: "", data: "hello" } }, 420),
        file("/var/lib/t", { inline: { encoding: "", data: "<<MACHINE_NAME>>" }, transmitUnencoded: true }, 416),
        file("/etc/b", { inline: { encoding: "b64", data: "aGk=" } }),
      ],
      units: [{ name: "x.service", content: "[Unit]", dropIns: [{ name: "10-a.conf", content: "[Service]" }] }] as Osc["spec"]["units"],
    });
    const out = renderUserData(o, { format: "cloud-config" });
    const doc = parse(out) as { write_files: Record<string, string>[]; runcmd: string[] };

    test("should start with #cloud-config", () => {
      expect(out.startsWith("#cloud-config\n")).toBe(true);
    });

    test("should list files then units and drop-ins as base64 write_files owned by root", () => {
      expect(doc.write_files).toEqual([
        { path: "/etc/a.conf", encoding: "b64", content: "aGVsbG8=", owner: "root:root", permissions: "0644" },
        { path: "/var/lib/t", content: "<<MACHINE_NAME>>\n", owner: "root:root", permissions: "0640" },
        { path: "/etc/b", encoding: "b64", content: "aGk=", owner: "root:root" },
        { path: "/etc/systemd/system/x.service", encoding: "b64", content: "W1VuaXRd", owner: "root:root" },
        { path: "/etc/systemd/system/x.service.d/10-a.conf", encoding: "b64", content: "W1NlcnZpY2Vd", owner: "root:root" },
      ]);
      expect(out).toContain("\n    <<MACHINE_NAME>>\n");
    });

    test("should activate units behind the run-once guard and set the marker", () => {
      expect(doc.runcmd).toEqual([
        [
          'if [ -f "/var/lib/osc/provision-osc-applied" ]; then',
          '  echo "Provision OSC already applied, exiting..."',
          "  exit 0",
          "fi",
          "systemctl daemon-reload",
          "systemctl enable 'x.service' && systemctl restart --no-block 'x.service'",
          "mkdir -p /var/lib/osc",
          "touch /var/lib/osc/provision-osc-applied",
          "",
        ].join("\n"),
      ]);
    });
  });
});
