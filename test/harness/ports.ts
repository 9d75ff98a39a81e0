/**
 * Listening ports for agents and stand-ins, handed out below the kernel's ephemeral range (32768+): a
 * port the OS picked as free (port 0) there can be taken by an outgoing connection before the agent
 * binds it. Each process starts at its own random offset, so two test runs rarely probe the same ports.
 */
let nextPort = 20_000 + Math.floor(Math.random() * 2_000) * 4;

/** The next port at or above the cursor that nothing listens on now. */
export function reservePort(): number {
  for (;;) {
    const port = nextPort++;
    if (nextPort >= 32_768) nextPort = 20_000;
    try {
      Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response() }).stop(true);
      return port;
    } catch {
      // In use: try the next one.
    }
  }
}
