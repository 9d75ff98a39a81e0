import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { DBusError, Message, sessionBus, type MessageBus } from "dbus-next";
import { ClientBus } from "../../src/systemd/dbus-client.ts";
import { startSystemdDouble, type SystemdDouble } from "../doubles/systemd/index.ts";

const DBUS = { destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus" };

const connected = (bus: ClientBus): Promise<void> =>
  new Promise((resolve, reject) => {
    bus.once("connect", resolve);
    bus.once("error", reject);
  });

describe("ClientBus against a dbus-daemon", () => {
  let double: SystemdDouble;
  let bus: ClientBus;
  /** dbus-next's full MessageBus as the other side. */
  let peer: MessageBus;

  beforeAll(async () => {
    double = await startSystemdDouble();
  });
  afterAll(async () => {
    await double.stop();
  });
  beforeEach(async () => {
    peer = sessionBus({ busAddress: double.address });
    await new Promise<void>((resolve) => peer.once("connect", resolve));
  });
  afterEach(() => {
    bus.disconnect();
    peer.disconnect();
  });

  test("should send a call made before the bus accepted it and resolve with the reply", async () => {
    bus = new ClientBus(double.address);
    const reply = await bus.call(new Message({ ...DBUS, member: "NameHasOwner", signature: "s", body: ["org.freedesktop.systemd1"] }));
    expect(reply.body).toEqual([true]);
    expect(bus.name).toMatch(/^:\d+\.\d+$/);
  });

  test("should reject an error reply with DBusError naming the error", async () => {
    bus = new ClientBus(double.address);
    const call = bus.call(new Message({ ...DBUS, member: "GetNameOwner", signature: "s", body: ["org.example.Nobody"] }));
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DBusError);
    expect((err as DBusError).type).toBe("org.freedesktop.DBus.Error.NameHasNoOwner");
  });

  test("should answer a method call to it with UnknownMethod", async () => {
    bus = new ClientBus(double.address);
    await connected(bus);
    const call = peer.call(new Message({ destination: bus.name ?? "", path: "/", interface: "org.example.Thing", member: "Poke" }));
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DBusError);
    expect((err as DBusError).type).toBe("org.freedesktop.DBus.Error.UnknownMethod");
  });

  test("should emit a signal that matches its rule as a message", async () => {
    bus = new ClientBus(double.address);
    await bus.call(new Message({ ...DBUS, member: "AddMatch", signature: "s", body: ["type='signal',interface='org.example.Thing'"] }));
    const next = new Promise<Message>((resolve) => bus.once("message", resolve));
    peer.send(Message.newSignal("/org/example", "org.example.Thing", "Changed", "s", ["now"]));
    const msg = await next;
    expect([msg.path, msg.interface, msg.member, msg.body]).toEqual(["/org/example", "org.example.Thing", "Changed", ["now"]]);
  });
});
