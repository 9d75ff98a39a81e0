import type { Message as BusMessage } from "dbus-next";
import { MessageType } from "dbus-next/lib/constants.js";
import { DBusError } from "dbus-next/lib/errors.js";
import { Message } from "dbus-next/lib/message-type.js";
import type { Logger } from "../log/index.ts";
import { CallLimit } from "./call-limit.ts";
import { ClientBus } from "./dbus-client.ts";
import { SystemdCallError } from "./types.ts";
import { errorText } from "../log/index.ts";

/**
 * dbus-daemon lets a connection wait for at most 128 replies (max_replies_per_connection, the system
 * bus default) and fails every call beyond that; half of it keeps well clear of the limit, and more
 * in flight would not make systemd, which handles calls one after another, any faster.
 */
const DEFAULT_MAX_CALLS_IN_FLIGHT = 64;

/** A method call on the system bus; `body` must match `signature`. */
export interface BusCall {
  readonly destination: string;
  readonly path: string;
  readonly iface: string;
  readonly member: string;
  readonly signature?: string;
  readonly body?: readonly unknown[];
}

/** A signal as received; the body is untrusted until a schema accepted it. */
export interface BusSignal {
  readonly path: string;
  readonly iface: string;
  readonly member: string;
  readonly body: readonly unknown[];
}

export interface BusConnectionOptions {
  readonly address: string;
  readonly log: Logger;
  /** Setup calls made on every new connection, before any other call. */
  readonly onConnect: (conn: Connected) => Promise<void>;
  /**
   * The match rule for the signals `onSignal` gets, in force on the bus only while some caller holds it
   * (`holdSignals`): a bus that serves others too then sends nothing while nobody here waits for a signal.
   */
  readonly signalMatch: string;
  readonly onSignal: (signal: BusSignal) => void;
  /** A reply that takes longer fails the call (libdbus uses 25 s). */
  readonly callTimeoutMs: number;
  /** Calls waiting for a reply at the same time (default DEFAULT_MAX_CALLS_IN_FLIGHT); more wait their turn here. */
  readonly maxCallsInFlight?: number;
}

/** What `onConnect` may do with a fresh connection. */
export interface Connected {
  call(req: BusCall, signal?: AbortSignal): Promise<unknown[]>;
}

interface Live {
  readonly bus: ClientBus;
  closed: boolean;
  /** Whether we last asked the bus to add `signalMatch` on this connection (not yet removed). */
  matched: boolean;
  /** Rejecters of calls still waiting for a reply on this connection. */
  readonly pending: Set<(err: Error) => void>;
}

/**
 * One persistent connection to the bus at `address`, opened on first use and reopened on the next call after
 * the bus went away (dbus-daemon restarted). Calls that never reached the bus are retried once on the new
 * connection; calls whose reply is lost fail with SystemdCallError.
 */
export class BusConnection {
  #live: Live | undefined;
  #opening: Promise<Live> | undefined;
  #closedForGood = false;
  /** Every call of every caller passes here, so no caller can overrun the bus's reply limit. */
  readonly #limit: CallLimit;
  /** Callers holding the signal match (see holdSignals). */
  #signalHolders = 0;

  constructor(private readonly opts: BusConnectionOptions) {
    this.#limit = new CallLimit(opts.maxCallsInFlight ?? DEFAULT_MAX_CALLS_IN_FLIGHT);
  }

  call(req: BusCall, signal?: AbortSignal): Promise<unknown[]> {
    return this.#limit.run(() => this.#callWithRetry(req, signal), signal);
  }

  async #callWithRetry(req: BusCall, signal?: AbortSignal): Promise<unknown[]> {
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const live = await this.#get(signal);
      try {
        return await this.#callOn(live, req, signal);
      } catch (err) {
        // The socket had already gone when we wrote: nothing reached the bus, so a retry is safe.
        if (err instanceof NotSentError && attempt === 0) continue;
        throw err;
      }
    }
  }

  /**
   * Puts the signal match in force until the returned release is called (held counts; the last release
   * removes it). Call it before the call whose signal you wait for: the AddMatch is written to the socket
   * now (or, while a connection opens, before that connection takes any call), and the bus handles a
   * connection's messages in order, so the rule is in force before the later call reaches its service.
   */
  holdSignals(): () => void {
    this.#signalHolders++;
    this.#syncMatch();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#signalHolders--;
      this.#syncMatch();
    };
  }

  /** Adds or removes the match on the live connection so that it is in force exactly while held. */
  #syncMatch(live = this.#live): void {
    const wanted = this.#signalHolders > 0;
    if (live === undefined || live.closed || live.matched === wanted) return;
    live.matched = wanted;
    const member = wanted ? "AddMatch" : "RemoveMatch";
    const msg = new Message({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member,
      signature: "s",
      body: [this.opts.signalMatch],
    });
    // Not awaited: the order on the wire is what puts the rule in force before the holder's call. A lost
    // reply (the connection dropped) needs nothing: the next connection starts without the rule.
    live.bus.call(msg).then(
      () => undefined,
      (err: unknown) => {
        if (live.closed) return;
        this.opts.log.warn(`D-Bus ${member} failed`, { err: errorText(err) });
        if (wanted) live.matched = false;
      },
    );
  }

  close(): void {
    this.#closedForGood = true;
    const live = this.#live;
    this.#live = undefined;
    if (live) this.#drop(live, new SystemdCallError("D-Bus connection closed"));
  }

  #get(signal?: AbortSignal): Promise<Live> {
    if (this.#closedForGood) return Promise.reject(new SystemdCallError("D-Bus connection closed"));
    if (this.#live && !this.#live.closed) return Promise.resolve(this.#live);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    // A caller's abort must not cancel an open that other callers share.
    return signal ? abortable(this.#opening, signal) : this.#opening;
  }

  async #open(): Promise<Live> {
    const { address, log } = this.opts;
    let bus: ClientBus;
    try {
      bus = new ClientBus(address);
    } catch (err) {
      throw new SystemdCallError(`cannot connect to D-Bus at ${address}: ${errorText(err)}`, { cause: err });
    }
    const live: Live = { bus, closed: false, matched: false, pending: new Set() };
    let failSetup: (err: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      failSetup = reject;
      const timer = setTimeout(() => reject(new Error("timed out")), this.opts.callTimeoutMs);
      bus.once("connect", () => {
        clearTimeout(timer);
        resolve();
      });
      bus.on("error", (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
        this.#drop(live, new SystemdCallError(`D-Bus connection failed: ${errorText(err)}`, { cause: err }));
      });
    });
    const onGone = () => {
      if (!live.closed) log.debug("D-Bus connection closed", { address });
      failSetup(new Error("connection closed during the handshake"));
      this.#drop(live, new SystemdCallError("D-Bus connection closed while waiting for a reply"));
    };
    bus.stream.once("end", onGone);
    bus.stream.once("close", onGone);
    bus.on("message", (msg: BusMessage) => {
      if (msg.type !== MessageType.SIGNAL) return;
      this.opts.onSignal({ path: msg.path, iface: msg.interface, member: msg.member, body: msg.body });
    });
    try {
      await ready;
      await this.opts.onConnect({ call: (req, signal) => this.#callOn(live, req, signal) });
    } catch (err) {
      this.#drop(live, new SystemdCallError("D-Bus connection setup failed"));
      if (err instanceof SystemdCallError) throw err;
      throw new SystemdCallError(`cannot connect to D-Bus at ${address}: ${errorText(err)}`, { cause: err });
    }
    if (this.#closedForGood) {
      this.#drop(live, new SystemdCallError("D-Bus connection closed"));
      throw new SystemdCallError("D-Bus connection closed");
    }
    log.debug("Connected to D-Bus", { address });
    this.#live = live;
    // Before the calls that wait for this connection are written (they resume after this returns).
    this.#syncMatch(live);
    return live;
  }

  #drop(live: Live, err: Error): void {
    if (live.closed) return;
    live.closed = true;
    for (const reject of live.pending) reject(err);
    live.pending.clear();
    try {
      live.bus.disconnect();
    } catch {
      // The socket is already gone; there is nothing left to release.
    }
  }

  #callOn(live: Live, req: BusCall, signal?: AbortSignal): Promise<unknown[]> {
    return new Promise<unknown[]>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      if (live.closed || live.bus.stream.writable === false) {
        this.#drop(live, new SystemdCallError("D-Bus connection closed"));
        return reject(new NotSentError());
      }
      const msg = new Message({
        destination: req.destination,
        path: req.path,
        interface: req.iface,
        member: req.member,
        signature: req.signature ?? "",
        body: [...(req.body ?? [])],
      });
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        live.pending.delete(onDrop);
      };
      const onAbort = () => {
        settle();
        reject(signal?.reason);
      };
      const onDrop = (err: Error) => {
        settle();
        reject(err);
      };
      const timer = setTimeout(
        () => onDrop(new SystemdCallError(`no reply to ${req.member} within ${this.opts.callTimeoutMs} ms`)),
        this.opts.callTimeoutMs,
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      live.pending.add(onDrop);
      live.bus.call(msg).then(
        (reply) => {
          settle();
          resolve(reply?.body ?? []);
        },
        (err: unknown) => {
          settle();
          // Only an error reply is a DBusError; anything else was thrown while writing to the socket.
          if (!(err instanceof DBusError) && live.bus.stream.writable === false) {
            this.#drop(live, new SystemdCallError("D-Bus connection closed"));
            return reject(new NotSentError({ cause: err }));
          }
          reject(err);
        },
      );
    });
  }
}

/** The message never left this process; internal to BusConnection's retry. */
class NotSentError extends SystemdCallError {
  constructor(options?: ErrorOptions) {
    super("D-Bus connection closed before the call was sent", options);
  }
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
