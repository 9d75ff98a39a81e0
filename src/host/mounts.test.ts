import { describe, expect, test } from "bun:test";
import { parseProcMounts } from "./mounts.ts";

describe("parseProcMounts", () => {
  test("should return every mount point in order with octal escapes decoded", () => {
    const text = [
      "/dev/vda1 / ext4 rw,relatime 0 0",
      "tmpfs /var/lib/kubelet/pods/a/volumes/x tmpfs rw 0 0",
      "tmpfs /var/lib/kubelet/pods/with\\040space\\011tab tmpfs rw 0 0",
      "",
    ].join("\n");
    expect(parseProcMounts(text)).toEqual(["/", "/var/lib/kubelet/pods/a/volumes/x", "/var/lib/kubelet/pods/with space\ttab"]);
  });
});
