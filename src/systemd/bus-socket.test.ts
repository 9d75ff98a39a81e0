import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, UnixSocketListener } from "bun";
import { openUnixBusWire, UnixBusSocket } from "./bus-socket.ts";

const dirs: string[] = [];
const listeners: UnixSocketListener<undefined>[] = [];
afterEach(() => {
  for (const l of listeners.splice(0)) l.stop(true);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A unix socket server whose peer socket and received bytes the test drives. */
function server() {
  const dir = mkdtempSync(join(tmpdir(), "bus-socket-"));
  dirs.push(dir);
  const path = join(dir, "bus");
  let received = Buffer.alloc(0);
  let peer!: (s: Socket<undefined>) => void;
  const connected = new Promise<Socket<undefined>>((r) => (peer = r));
  const waiters: (() => void)[] = [];
  const listener = Bun.listen<undefined>({
    unix: path,
    socket: {
      open: (s) => peer(s),
      data: (_s, data) => {
        received = Buffer.concat([received, data]);
        for (const w of waiters.splice(0)) w();
      },
    },
  });
  listeners.push(listener);
  const receivedAtLeast = async (n: number) => {
    while (received.length < n) await new Promise<void>((r) => waiters.push(r));
    return received;
  };
  return { path, connected, receivedAtLeast };
}

const event = (s: UnixBusSocket, name: string) => new Promise<unknown[]>((r) => s.once(name, (...args: unknown[]) => r(args)));

describe("UnixBusSocket", () => {
  test("should send what was written before it connected, in order, and then what is written later", async () => {
    const srv = server();
    const s = new UnixBusSocket(srv.path);
    s.write("\0");
    s.write(new Uint8Array([65, 66]));
    await event(s, "connect");
    s.write("C");
    expect((await srv.receivedAtLeast(4)).toString("latin1")).toBe("\0ABC");
    s.end();
  });

  test("should give n bytes only once n have arrived, across chunks, keeping the rest", async () => {
    const srv = server();
    const s = new UnixBusSocket(srv.path);
    await event(s, "connect");
    const peer = await srv.connected;
    peer.write("OK 12");
    await event(s, "readable");
    expect(s.read(7)).toBeNull();
    peer.write("34\r\nrest");
    let line: Buffer | null = null;
    while ((line = s.read(7)) === null) await event(s, "readable");
    expect(line.toString()).toBe("OK 1234");
    expect(s.read(2)?.toString()).toBe("\r\n");
    let rest: Buffer | null = null;
    while ((rest = s.read(4)) === null) await event(s, "readable");
    expect(rest.toString()).toBe("rest");
    expect(s.read(1)).toBeNull();
    s.end();
  });

  test("should tell a reader that starts listening late what arrived while nobody listened", async () => {
    const srv = server();
    const s = new UnixBusSocket(srv.path);
    await event(s, "connect");
    const peer = await srv.connected;
    const closed = event(s, "close");
    peer.write("x");
    peer.end();
    await closed;
    await event(s, "readable");
    expect(s.read(1)?.toString()).toBe("x");
  });

  test("should end then close once when the peer goes away, and refuse writes after", async () => {
    const srv = server();
    const s = new UnixBusSocket(srv.path);
    await event(s, "connect");
    const order: string[] = [];
    s.on("end", () => order.push("end"));
    s.on("close", () => order.push("close"));
    const closed = event(s, "close");
    (await srv.connected).end();
    await closed;
    expect(order).toEqual(["end", "close"]);
    expect(s.writable).toBe(false);
    expect(() => s.write("late")).toThrow("write after end");
  });

  test("should report a bus that is not there as an error, then close", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bus-socket-"));
    dirs.push(dir);
    const s = new UnixBusSocket(join(dir, "missing"));
    const order: string[] = [];
    s.on("error", () => order.push("error"));
    await event(s, "close");
    expect(order).toEqual(["error"]);
  });
});

describe("openUnixBusWire", () => {
  test("should take a single unix:path address only", () => {
    expect(openUnixBusWire("tcp:host=localhost,port=1")).toBeUndefined();
    expect(openUnixBusWire("unix:abstract=/x")).toBeUndefined();
    expect(openUnixBusWire("unix:path=/a;unix:path=/b")).toBeUndefined();
    expect(openUnixBusWire("unix:socket=/a,path=/b")).toBeUndefined();
  });
});
