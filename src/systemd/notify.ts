import type { Library } from "bun:ffi";
import type { Clock } from "../clock/index.ts";

/**
 * sd_notify(3) without reading the environment: the caller passes the NOTIFY_SOCKET value. The
 * datagram is sent with libc's socket/sendto through bun:ffi (Bun has no unix datagram sockets);
 * the wire format is the same as libsystemd's sd_notify: the state text, one datagram per call.
 */
export interface Notifier {
  /** Sends a state such as "READY=1"; false when there is no socket or the send failed. */
  notify(state: string): boolean;
  ready(): boolean;
  stopping(): boolean;
  watchdog(): boolean;
  close(): void;
}

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const MSG_NOSIGNAL = 0x4000;
/** sizeof(struct sockaddr_un) on Linux: sa_family_t + char sun_path[108]. */
const SOCKADDR_UN_SIZE = 110;

/** A notifier that does nothing: the process was not started by systemd with Type=notify. */
export const nopNotifier: Notifier = {
  notify: () => false,
  ready: () => false,
  stopping: () => false,
  watchdog: () => false,
  close: () => {},
};

const withStates = (notify: (state: string) => boolean, close: () => void): Notifier => ({
  notify,
  ready: () => notify("READY=1"),
  stopping: () => notify("STOPPING=1"),
  watchdog: () => notify("WATCHDOG=1"),
  close,
});

/** `struct sockaddr_un` for a path; `@name` is an abstract socket (leading NUL byte). */
const sockaddr = (socketPath: string): { addr: Uint8Array; len: number } | undefined => {
  const path = new TextEncoder().encode(socketPath);
  const abstract = socketPath.startsWith("@");
  if (path.byteLength === 0 || path.byteLength >= SOCKADDR_UN_SIZE - 2) return undefined;
  if (!abstract && !socketPath.startsWith("/")) return undefined;
  const addr = new Uint8Array(SOCKADDR_UN_SIZE);
  new DataView(addr.buffer).setUint16(0, AF_UNIX, true);
  addr.set(path, 2);
  if (abstract) addr[2] = 0;
  // Abstract addresses are exactly as long as the name; path addresses include the NUL.
  return { addr, len: 2 + path.byteLength + (abstract ? 0 : 1) };
};

/**
 * A notifier for `notifySocket` (the NOTIFY_SOCKET value), or `nopNotifier` when it is unset, empty
 * or unusable. libc is mapped only here, so runs without NOTIFY_SOCKET never load bun:ffi.
 */
export const createNotifier = async (notifySocket: string | undefined, libcPath = "libc.so.6"): Promise<Notifier> => {
  if (notifySocket === undefined || notifySocket === "") return nopNotifier;
  const address = sockaddr(notifySocket);
  if (address === undefined) return nopNotifier;
  const ffi = await import("bun:ffi");
  const symbols = {
    socket: { args: [ffi.FFIType.i32, ffi.FFIType.i32, ffi.FFIType.i32], returns: ffi.FFIType.i32 },
    sendto: {
      args: [ffi.FFIType.i32, ffi.FFIType.ptr, ffi.FFIType.u64, ffi.FFIType.i32, ffi.FFIType.ptr, ffi.FFIType.u32],
      returns: ffi.FFIType.i64,
    },
    close: { args: [ffi.FFIType.i32], returns: ffi.FFIType.i32 },
  } as const;
  const libc: Library<typeof symbols> = ffi.dlopen(libcPath, symbols);
  const fd = libc.symbols.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    libc.close();
    return nopNotifier;
  }
  const encoder = new TextEncoder();
  let closed = false;
  return withStates(
    (state) => {
      if (closed) return false;
      const msg = encoder.encode(state);
      const sent = libc.symbols.sendto(fd, ffi.ptr(msg), msg.byteLength, MSG_NOSIGNAL, ffi.ptr(address.addr), address.len);
      return Number(sent) === msg.byteLength;
    },
    () => {
      if (closed) return;
      closed = true;
      libc.symbols.close(fd);
      libc.close();
    },
  );
};

/** Half of WATCHDOG_USEC in ms (systemd's advice), or undefined when the watchdog is off. */
export const watchdogIntervalMs = (watchdogUsec: string | undefined): number | undefined => {
  if (watchdogUsec === undefined || !/^[0-9]+$/.test(watchdogUsec)) return undefined;
  const usec = Number(watchdogUsec);
  return usec > 0 ? usec / 2 / 1000 : undefined;
};

/** Sends WATCHDOG=1 every `intervalMs` until `signal` aborts; resolves then. */
export const runWatchdog = async (notifier: Notifier, intervalMs: number, clock: Clock, signal: AbortSignal): Promise<void> => {
  while (!signal.aborted) {
    notifier.watchdog();
    try {
      await clock.sleep(intervalMs, signal);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
  }
};
