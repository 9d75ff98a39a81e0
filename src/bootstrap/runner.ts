/** Outcome of one finished command. */
export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs one host command (argv, no shell). Injected so tests can record calls and replay
 * recorded outputs instead of touching real block devices.
 */
export interface CommandRunner {
  run(argv: readonly string[], signal?: AbortSignal): Promise<RunResult>;
}

/** The real runner: Bun.spawn with stdin closed, both streams captured; the command inherits the agent's environment. */
export function createProcessRunner(): CommandRunner {
  return {
    async run(argv, signal) {
      const [cmd] = argv;
      if (cmd === undefined) throw new Error("empty command line");
      const proc = Bun.spawn([...argv], {
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        ...(signal === undefined ? {} : { signal }),
      });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { code, stdout, stderr };
    },
  };
}

/** argv joined for messages: `mkfs.ext4 -L KUBEDEV …`. */
export const formatArgv = (argv: readonly string[]): string => argv.join(" ");
