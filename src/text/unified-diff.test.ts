import { describe, expect, test } from "bun:test";
import { asText, unifiedDiff } from "./unified-diff.ts";

describe("unifiedDiff", () => {
  test("should be empty for equal texts", () => {
    expect(unifiedDiff("a\nb\n", "a\nb\n", "x", "x")).toBe("");
  });

  test("should show one changed line with three lines of context", () => {
    const old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const cur = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    expect(unifiedDiff(old, cur, "/etc/a", "/etc/a")).toBe(
      ["--- /etc/a", "+++ /etc/a", "@@ -2,7 +2,7 @@", " 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8", ""].join("\n"),
    );
  });

  test("should make two hunks for changes far apart", () => {
    const lines = Array.from({ length: 20 }, (_, i) => `${i + 1}`);
    const cur = [...lines];
    cur[1] = "two";
    cur[18] = "nineteen";
    const d = unifiedDiff(`${lines.join("\n")}\n`, `${cur.join("\n")}\n`, "a", "b");
    expect(d.split("\n").filter((l) => l.startsWith("@@"))).toEqual(["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]);
  });

  test("should show a new file as all added", () => {
    expect(unifiedDiff("", "x\ny\n", "/dev/null", "/etc/n")).toBe(
      ["--- /dev/null", "+++ /etc/n", "@@ -0,0 +1,2 @@", "+x", "+y", ""].join("\n"),
    );
  });

  test("should diff insertions in the middle", () => {
    expect(unifiedDiff("a\nc\n", "a\nb\nc\n", "o", "n")).toBe(["--- o", "+++ n", "@@ -1,2 +1,3 @@", " a", "+b", " c", ""].join("\n"));
  });
});

describe("asText", () => {
  test("should refuse NUL bytes and invalid UTF-8", () => {
    expect(asText(new Uint8Array([0x61, 0]))).toBeUndefined();
    expect(asText(new Uint8Array([0xff, 0xfe]))).toBeUndefined();
    expect(asText(new TextEncoder().encode("ü\n"))).toBe("ü\n");
  });
});
