import type { HostFs } from "../host/index.ts";
import { machineNamePath } from "./paths.ts";
import { errorText } from "../log/index.ts";

class MachineNameError extends Error {
  override readonly name = "MachineNameError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** First line of /var/lib/gardener-node-agent/machine-name (user-data writes it with a trailing newline). */
export async function readMachineName(host: HostFs): Promise<string> {
  let text: string | undefined;
  try {
    text = await host.readText(machineNamePath);
  } catch (err) {
    throw new MachineNameError(`failed reading machine-name file ${machineNamePath}: ${errorText(err)}`, {
      cause: err,
    });
  }
  if (text === undefined) throw new MachineNameError(`failed reading machine-name file ${machineNamePath}: file does not exist`);
  return (text.split("\n")[0] ?? "").trim();
}
