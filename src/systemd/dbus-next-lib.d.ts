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
  export interface BusWire {
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
  /** A message as unmarshalMessages reads it, in the shape Message's constructor takes. */
  export function messageToJsFmt(raw: unknown): ConstructorParameters<typeof import("dbus-next").Message>[0];
}

declare module "dbus-next/lib/handshake.js" {
  /** The client's authentication (EXTERNAL with the uid, then the others) on `stream`; `done` once it began. */
  export default function clientHandshake(stream: unknown, opts: object, done: (err: unknown, guid?: string) => void): void;
}

declare module "dbus-next/lib/message.js" {
  /** Reads messages off a paused-mode stream (`readable` + `read(n)`) for as long as it lives. */
  export function unmarshalMessages(stream: unknown, onMessage: (raw: unknown) => void, opts: object): void;
}
