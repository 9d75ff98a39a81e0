import { networkInterfaces } from "node:os";

/** Lists the host's interface addresses in CIDR form (`10.0.0.5/24`), like Go's net.InterfaceAddrs. */
export type ListHostAddresses = () => string[];

/** The real lister: every address of every interface, loopback included. */
export const hostInterfaceAddresses: ListHostAddresses = () => {
  const out: string[] = [];
  for (const infos of Object.values(networkInterfaces())) {
    for (const i of infos ?? []) out.push(i.cidr ?? `${i.address}/${i.family === "IPv4" ? 32 : 128}`);
  }
  return out;
};
