// The parts of dbus-next below its index that dbus-client.ts uses; dbus-next's own types cover only the index,
// whose MessageBus loads the XML introspection and service-export code the agent never runs.
declare module "dbus-next/lib/connection.js" {
  import type { Message } from "dbus-next";

  /** The byte stream to the bus (a node:net socket for the unix and tcp addresses). */
  interface BusStream {
    readonly writable?: boolean;
    /** Set where file descriptors can be passed (usocket): writes then take `{ data, fds }`. */
    readonly supportsUnixFd?: boolean;
    write(bytes: Uint8Array): boolean;
    end(): void;
    once(event: "close" | "end", fn: () => void): void;
  }

  /** Authenticates on the stream, then emits "connect", each "message" and "error". */
  interface BusWire {
    readonly stream: BusStream;
    /** "connected" once the handshake is done (messages are then written, not queued). */
    readonly state?: string;
    /** Marshals and writes `msg` (buffered until "connect"); throws once the stream is closed. */
    message(msg: Message): void;
    on(event: "message", fn: (msg: Message) => void): void;
    on(event: "error", fn: (err: unknown) => void): void;
  }

  export default function createConnection(opts: { readonly busAddress: string }): BusWire;
}

declare module "dbus-next/lib/message-type.js" {
  export { Message } from "dbus-next";
}

declare module "dbus-next/lib/errors.js" {
  export { DBusError } from "dbus-next";
}

declare module "dbus-next/lib/constants.js" {
  export { MessageFlag, MessageType } from "dbus-next";
}

// Only marshal-call.test.ts: dbus-next's writer, the reference its bytes are compared with.
declare module "dbus-next/lib/marshall-compat.js" {
  import type { Message } from "dbus-next";

  export function marshallMessage(msg: Message): [Buffer, unknown[]];
}
