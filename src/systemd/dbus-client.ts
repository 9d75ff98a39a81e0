import { EventEmitter } from "node:events";
import type { Message as BusMessage } from "dbus-next";
import type createConnection from "dbus-next/lib/connection.js";
import { MessageFlag, MessageType } from "dbus-next/lib/constants.js";
import { DBusError } from "dbus-next/lib/errors.js";
import { Message } from "dbus-next/lib/message-type.js";
import { openUnixBusWire } from "./bus-socket.ts";
import { marshalMessage } from "./marshal-call.ts";

// dbus-next's MessageBus (its index) also loads the introspection and service-export code with its XML
// libraries (xml2js, xmlbuilder, sax), none of which a client making method calls runs: this is the part of
// it the agent uses, on dbus-next's own connection (authentication, marshalling). Binary −408 KiB.

/** What the bus daemon sends to a method call it cannot route and what we answer to calls we do not serve. */
const UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod";

interface ClientBusEvents {
  /** The bus accepted us (Hello answered): calls made before this are sent now. */
  connect: [];
  error: [unknown];
  /** Every message received, replies included. */
  message: [BusMessage];
}

/**
 * A client connection to a message bus: method calls with their replies matched by serial, every received
 * message as a "message" event. Calls made before "connect" are queued.
 */
export class ClientBus extends EventEmitter<ClientBusEvents> {
  readonly #wire;
  #serial = 1;
  #name: string | undefined;
  readonly #replies = new Map<number, (reply: BusMessage) => void>();

  constructor(address: string) {
    super();
    // dbus-next's own connection (node:net) only for addresses other than one unix:path.
    this.#wire = openUnixBusWire(address) ?? (require("dbus-next/lib/connection.js") as typeof createConnection)({ busAddress: address });
    this.#wire.on("message", (msg) => this.#receive(msg));
    this.#wire.on("error", (err) => this.emit("error", err));
    const hello = new Message({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "Hello",
    });
    this.call(hello).then(
      (reply) => {
        this.#name = String(reply.body[0]);
        this.emit("connect");
      },
      (err: unknown) => this.emit("error", err),
    );
  }

  /** The unique name the bus gave us (":1.42"), once connected. */
  get name(): string | undefined {
    return this.#name;
  }

  /** The byte stream to the bus; its end/close is the prompt sign that the bus went away. */
  get stream() {
    return this.#wire.stream;
  }

  /** Sends a method call; resolves with the reply, rejects with DBusError for an error reply. */
  call(msg: BusMessage): Promise<BusMessage> {
    return new Promise<BusMessage>((resolve, reject) => {
      const serial = this.#serial++;
      msg.serial = serial;
      this.#replies.set(serial, (reply) =>
        reply.type === MessageType.ERROR ? reject(new DBusError(reply.errorName, reply.body[0], reply)) : resolve(reply),
      );
      try {
        this.#write(msg);
      } catch (err) {
        this.#replies.delete(serial);
        reject(err);
      }
    });
  }

  /** Our own bytes for the common shapes once connected (marshal-call.ts); dbus-next's `message` otherwise (queues before the handshake, throws once closed). */
  #write(msg: BusMessage): void {
    const wire = this.#wire;
    const bytes =
      wire.state === "connected" && wire.stream.writable === true && wire.stream.supportsUnixFd !== true ? marshalMessage(msg) : undefined;
    if (bytes === undefined) wire.message(msg);
    else wire.stream.write(bytes);
  }

  disconnect(): void {
    this.#wire.stream.end();
  }

  #receive(msg: BusMessage): void {
    this.emit("message", msg);
    if (msg.type === MessageType.METHOD_RETURN || msg.type === MessageType.ERROR) {
      const serial = Number(msg.replySerial);
      const settle = this.#replies.get(serial);
      this.#replies.delete(serial);
      settle?.(msg);
    } else if (msg.type === MessageType.METHOD_CALL && (msg.flags & MessageFlag.NO_REPLY_EXPECTED) === 0) {
      // We export no objects; a caller still gets an answer instead of waiting for its timeout.
      const text = `Method '${msg.member}' on interface '${msg.interface ?? "(none)"}' does not exist`;
      // dbus-next's types call replySerial a string; it is marshalled as a uint32 and must be a number.
      const replySerial = msg.serial as unknown as string;
      this.#send(
        new Message({
          type: MessageType.ERROR,
          replySerial,
          destination: msg.sender,
          errorName: UNKNOWN_METHOD,
          signature: "s",
          body: [text],
        }),
      );
    }
  }

  #send(msg: BusMessage): void {
    msg.serial = this.#serial++;
    try {
      this.#write(msg);
    } catch {
      // The stream closed: the caller's own timeout answers for it, and the close is reported on the stream.
    }
  }
}
