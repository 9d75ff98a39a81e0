/**
 * Listening ports for agents and stand-ins, handed out below the kernel's ephemeral range (32768+): a
 * port the OS picked as free (port 0) there can be taken by an outgoing connection before the agent
 * binds it. Test files run side by side in several processes (`bun test --parallel`), each holding
 * ports it reserved but has not bound yet: every call picks a random port (a cursor walking up from a
 * random start would walk into another process's ports), never one this process handed out before.
 */
const low = 20_000;
const high = 32_768;
const handedOut = new Set<number>();

/** A random port in 20000-32767 that nothing listens on now and this process has not handed out. */
export function reservePort(): number {
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port)) continue;
    try {
      Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response() }).stop(true);
    } catch {
      continue; // In use: try another one.
    }
    handedOut.add(port);
    return port;
  }
}
