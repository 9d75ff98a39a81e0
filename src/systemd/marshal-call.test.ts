import { describe, expect, test } from "bun:test";
import { Message } from "dbus-next";
// dbus-next's own writer, the reference for every byte.
import { marshallMessage } from "dbus-next/lib/marshall-compat.js";
import { marshalMessage, type OutgoingMessage } from "./marshal-call.ts";

const reference = (msg: OutgoingMessage): string =>
  marshallMessage(new Message({ ...msg, body: [...(msg.body ?? [])] } as ConstructorParameters<typeof Message>[0]))[0].toString("hex");
const ours = (msg: OutgoingMessage): string => Buffer.from(marshalMessage(msg) ?? []).toString("hex");

const manager = {
  destination: "org.freedesktop.systemd1",
  path: "/org/freedesktop/systemd1",
  interface: "org.freedesktop.systemd1.Manager",
};

/** Deterministic pseudo-random strings: ASCII of every length mod 8, multi-byte UTF-8, empty. */
function* strings(seed: number): Generator<string> {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  for (;;) {
    const n = next() % 23;
    const pick = next() % 4;
    let s = "";
    for (let i = 0; i < n; i++) s += pick === 0 ? "é€😀a"[next() % 4] : String.fromCharCode(97 + (next() % 26));
    yield s;
  }
}

describe("marshalMessage", () => {
  test("writes the agent's calls byte for byte as dbus-next does", () => {
    const calls: OutgoingMessage[] = [
      { ...manager, member: "Reload", serial: 7 },
      { ...manager, member: "Subscribe", serial: 2 },
      { ...manager, member: "RestartUnit", signature: "ss", body: ["bench-0.service", "replace"], serial: 33 },
      { ...manager, member: "EnableUnitFiles", signature: "asbb", body: [["a.service", "b.service"], false, true], serial: 4 },
      { ...manager, member: "DisableUnitFiles", signature: "asb", body: [["a.service"], false], serial: 5 },
      { ...manager, member: "ListUnitsByNames", signature: "as", body: [[]], serial: 6 },
      { ...manager, member: "LoadUnit", signature: "s", body: ["x.service"], serial: 0xffffffff },
      {
        destination: "org.freedesktop.DBus",
        path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus",
        member: "AddMatch",
        signature: "s",
        body: ["type='signal',member='JobRemoved'"],
        serial: 1,
      },
      {
        ...manager,
        path: "/org/freedesktop/systemd1/unit/a_2eservice",
        interface: "org.freedesktop.DBus.Properties",
        member: "Get",
        signature: "ss",
        body: ["org.freedesktop.systemd1.Unit", "TriggeredBy"],
        serial: 9,
      },
      {
        type: 3,
        errorName: "org.freedesktop.DBus.Error.UnknownMethod",
        replySerial: 12,
        destination: ":1.4",
        signature: "s",
        body: ["no"],
        serial: 10,
      },
      { ...manager, member: "X", signature: "uobs", body: [0, "/a/b", 1, "ü"], serial: 11, flags: 1 },
    ];
    for (const msg of calls) expect(ours(msg)).toBe(reference(msg));
  });

  test("matches dbus-next over generated strings, arrays and field lengths (every alignment)", () => {
    const gen = strings(42);
    const word = () => gen.next().value as string;
    for (let i = 0; i < 3000; i++) {
      const member = `M${"x".repeat(i % 9)}`;
      const path = i % 5 === 0 ? "/" : `/org/p${"q".repeat(i % 7)}`;
      const list = Array.from({ length: i % 6 }, word);
      const msg: OutgoingMessage =
        i % 3 === 0
          ? { ...manager, path, member, signature: "ss", body: [word(), word()], serial: i + 1 }
          : i % 3 === 1
            ? { ...manager, path, member, signature: "sasbu", body: [word(), list, i % 2 === 0, i * 7919], serial: i + 1 }
            : { ...manager, path, member, signature: "asb", body: [list, true], serial: i + 1 };
      expect(ours(msg)).toBe(reference(msg));
    }
  });

  test("leaves other types and values dbus-next would check to dbus-next", () => {
    const base = { ...manager, member: "M", serial: 3 };
    for (const msg of [
      { ...base, signature: "a{sv}", body: [{}] },
      { ...base, signature: "t", body: [1] },
      { ...base, signature: "v", body: [1] },
      { ...base, signature: "s", body: ["nul\0inside"] },
      { ...base, signature: "s", body: [5] },
      { ...base, signature: "as", body: [["a", 1]] },
      { ...base, signature: "b", body: ["yes"] },
      { ...base, signature: "u", body: [-1] },
      { ...base, signature: "ss", body: ["only one"] },
      { ...base, serial: 0 },
      { ...base, replySerial: "4" },
    ] as OutgoingMessage[])
      expect(marshalMessage(msg)).toBeUndefined();
  });
});
