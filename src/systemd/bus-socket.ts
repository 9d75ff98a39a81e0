import { EventEmitter } from "node:events";
import type { Socket } from "bun";
import type { Message as BusMessage } from "dbus-next";
import type { BusWire } from "dbus-next/lib/connection.js";
import clientHandshake from "dbus-next/lib/handshake.js";
import { unmarshalMessages } from "dbus-next/lib/message.js";
import { Message } from "dbus-next/lib/message-type.js";
import { marshallMessage, messageToJsFmt } from "dbus-next/lib/marshall-compat.js";

/** The socket path of a single `unix:path=…[,guid=…]` address, read as dbus-next reads it; else undefined. */
function unixPath(address: string): string | undefined {
  if (address.includes(";") || !address.startsWith("unix:")) return undefined;
  const params = new Map(
    address
      .slice("unix:".length)
      .split(",")
      .map((p) => [p.split("=")[0], p.split("=")[1]] as const),
  );
  // dbus-next prefers `socket` and `abstract` over `path`.
  if (params.has("socket") || params.has("abstract")) return undefined;
  const path = params.get("path");
  return path === undefined || path === "" ? undefined : path;
}

/**
 * dbus-next's connection (lib/connection.js: authentication, then every message read) for a single
 * `unix:path=` address on UnixBusSocket; undefined for any other address (dbus-next's own then, on node:net).
 */
export function openUnixBusWire(address: string): BusWire | undefined {
  const path = unixPath(address);
  if (path === undefined) return undefined;
  const stream = new UnixBusSocket(path);
  const wire = new EventEmitter() as EventEmitter & { stream: UnixBusSocket; state?: string; message(msg: BusMessage): void };
  wire.stream = stream;
  stream.on("error", (err) => wire.emit("error", err));
  stream.on("end", () => {
    wire.emit("end");
    wire.message = () => wire.emit("error", new Error("Tried to write a message to a closed stream"));
  });
  // Queued until the handshake is done, then written as they come.
  const queued: BusMessage[] = [];
  wire.message = (msg) => queued.push(msg);
  stream.once("connect", () =>
    clientHandshake(stream, {}, (err) => {
      if (err) {
        wire.emit("error", err);
        return;
      }
      wire.state = "connected";
      for (const msg of queued.splice(0)) stream.write(marshallMessage(msg)[0]);
      wire.message = (msg) => {
        if (!stream.writable) throw new Error("Cannot send message, stream is closed");
        stream.write(marshallMessage(msg)[0]);
      };
      unmarshalMessages(
        stream,
        (raw) => {
          let msg: BusMessage;
          try {
            msg = new Message(messageToJsFmt(raw));
          } catch (e) {
            wire.emit("error", e);
            return;
          }
          wire.emit("message", msg);
        },
        {},
      );
    }),
  );
  return wire;
}

/**
 * The byte stream to a bus at a `unix:path=` address on Bun's own socket (Bun.connect) instead of node:net,
 * shaped like the paused-mode net.Socket dbus-next reads (`readable` + `read(n)`) and writes. node:net's first
 * connection makes the agent's first apply leave ≈ 1.3 MB more of the binary resident for good than
 * Bun.connect does (a compiled probe, pages of the binary present after each first use); nothing else at
 * run time loads it.
 */
export class UnixBusSocket extends EventEmitter {
  readonly supportsUnixFd = false;
  #socket: Socket | undefined;
  /** Bytes received and not read yet, oldest first; `#buffered` counts them. */
  #received: Buffer[] = [];
  #buffered = 0;
  /** Bytes arrived while no `readable` listener was there. */
  #unannounced = false;
  /** Bytes written before the socket was open or while the kernel's buffer was full, in order. */
  #unsent: Uint8Array[] = [];
  #ending = false;
  #writable = true;
  #closed = false;

  constructor(path: string) {
    super();
    // As node:net: a reader that starts listening finds what arrived while nobody listened.
    this.on("newListener", (event: string) => {
      if (event !== "readable" || !this.#unannounced) return;
      this.#unannounced = false;
      queueMicrotask(() => this.emit("readable"));
    });
    Bun.connect({
      unix: path,
      socket: {
        open: (socket) => {
          this.#socket = socket;
          this.#flush();
          this.emit("connect");
        },
        data: (_socket, data) => {
          this.#received.push(data);
          this.#buffered += data.length;
          this.#unannounced = this.listenerCount("readable") === 0;
          this.emit("readable");
        },
        drain: () => this.#flush(),
        end: () => this.#gone(),
        close: () => this.#gone(),
        error: (_socket, err) => this.#failed(err),
      },
    }).catch((err: unknown) => this.#failed(err));
  }

  get writable(): boolean {
    return this.#writable;
  }

  /** Buffers what the socket does not take at once (node:net's write does the same). */
  write(data: string | Uint8Array): boolean {
    if (!this.#writable) throw new Error("write after end");
    this.#unsent.push(typeof data === "string" ? Buffer.from(data) : data);
    this.#flush();
    return this.#unsent.length === 0;
  }

  /** `n` bytes once that many arrived, else null (`readable` is emitted again when more arrive). */
  read(n: number): Buffer | null {
    if (this.#buffered < n) return null;
    const all = this.#received.length === 1 ? this.#received[0]! : Buffer.concat(this.#received, this.#buffered);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.#received = rest.length > 0 ? [rest] : [];
    this.#buffered = rest.length;
    return out;
  }

  /** Closes after what is still unsent has gone out. */
  end(): void {
    this.#writable = false;
    this.#ending = true;
    if (this.#socket === undefined) {
      if (this.#closed) return;
      this.#gone();
      return;
    }
    if (this.#unsent.length === 0) this.#socket.end();
  }

  #flush(): void {
    const socket = this.#socket;
    if (socket === undefined) return;
    while (this.#unsent.length > 0) {
      const chunk = this.#unsent[0]!;
      const sent = socket.write(chunk);
      if (sent < chunk.length) {
        if (sent > 0) this.#unsent[0] = chunk.subarray(sent);
        return;
      }
      this.#unsent.shift();
    }
    if (this.#ending) socket.end();
  }

  #failed(err: unknown): void {
    this.emit("error", err);
    this.#gone();
  }

  /** The peer or we closed: `end` then `close`, once, as node:net emits them. */
  #gone(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#writable = false;
    this.#unsent = [];
    this.#socket?.end();
    this.emit("end");
    this.emit("close");
  }
}
