import { describe, expect, test } from "bun:test";
import { isIP } from "node:net";
import { isIpLiteral } from "./ip-literal.ts";

// The check replaces node:net's isIP on the start path, so it must answer exactly as isIP does.
const cases = [
  "",
  "0.0.0.0",
  "127.0.0.1",
  "255.255.255.255",
  "256.1.1.1",
  "1.2.3",
  "1.2.3.4.5",
  "01.2.3.4",
  "1.2.3.04",
  "1.2.3.4 ",
  " 1.2.3.4",
  "1..3.4",
  "0x7f.0.0.1",
  "1",
  "localhost",
  "::",
  "::1",
  "1::",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7::",
  "::2:3:4:5:6:7:8",
  "1::2:3:4:5:6:7",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7",
  "1::2::3",
  ":::",
  "1:::2",
  ":1::2",
  "1::2:",
  "12345::1",
  "fe80::1%eth0",
  "fe80::1%",
  "fe80::1%eth 0",
  "fe80::1%1",
  "::ffff:1.2.3.4",
  "::ffff:01.2.3.4",
  "::ffff:1.2.3",
  "::ffff:256.2.3.4",
  "1:2:3:4:5:6:1.2.3.4",
  "1:2:3:4:5:6:7:1.2.3.4",
  "1.2.3.4::",
  "[::1]",
  "::1]",
  "g::1",
  "FFFF::abcd",
  "::1/128",
  "1:2:3:4:5::1.2.3.4",
  "::1.2.3.4",
  "::1:1:1:1:1.2.3.4",
  "::1:2:3:4:5:6:1.2.3.4",
  "1:2:3:4:5:6::1.2.3.4",
  "1:2:3:4::5:6:7:8",
  "::9:",
  "ffff:1::1:%eth0",
  "::%a",
  "1::2%a%b",
  "1:2:3:4:5:6:7:8%eth0",
];

/** Deterministic pseudo-random texts from the characters and parts IP literals are made of. */
const generated = (n: number): string[] => {
  let seed = 7;
  const next = (m: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % m;
  };
  const chars = "01f:.:2:a%e9:";
  const parts = ["", "0", "1", "ff", "ffff", "12345", "1.2.3.4", "01.2.3.4", "256.0.0.1", "1.2.3"];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      let s = "";
      for (let k = next(14); k > 0; k--) s += chars[next(chars.length)];
      out.push(s);
    } else {
      const picked: string[] = [];
      for (let k = 1 + next(10); k > 0; k--) picked.push(parts[next(parts.length)] ?? "");
      out.push(picked.join(":") + (next(5) === 0 ? "%eth0" : ""));
    }
  }
  return out;
};

describe("isIpLiteral", () => {
  test.each(cases)("should answer as node:net's isIP for %p", (text) => {
    expect(isIpLiteral(text)).toBe(isIP(text) !== 0);
  });

  test("should answer as node:net's isIP for 50,000 generated texts", () => {
    const differing = generated(50_000).filter((text) => isIpLiteral(text) !== (isIP(text) !== 0));
    expect(differing).toEqual([]);
  });
});
