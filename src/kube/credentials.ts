import { TransportError } from "./errors.ts";
import { errorText } from "../log/index.ts";

/** Reads a whole (already root-resolved) file as text. Injected so tests and `--root` can steer it. */
export type ReadTextFile = (path: string) => Promise<string>;
/** Cheap identity of a file's current content: changes when the file is rewritten or replaced. */
export type StatFile = (path: string) => Promise<string>;

export const bunReadTextFile: ReadTextFile = (path) => Bun.file(path).text();
export const bunStatFile: StatFile = async (path) => {
  const st = await Bun.file(path).stat();
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
};

/** How requests authenticate. Client certificates are part of the TLS options, not of this. */
export type Credentials =
  | { readonly kind: "none" }
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "tokenFile"; readonly path: string }
  | { readonly kind: "basic"; readonly username: string; readonly password: string };

/** Produces the Authorization header value for the next request (undefined → none). */
export interface AuthSource {
  header(): Promise<string | undefined>;
}

/**
 * A bearer token read from a file. Each request stats the file (one syscall) and re-reads it only
 * when inode, size, mtime or ctime changed, so a rotated token is used by the very next request.
 */
export class TokenFileSource implements AuthSource {
  #stamp: string | undefined;
  #token = "";

  constructor(
    readonly path: string,
    private readonly readFile: ReadTextFile = bunReadTextFile,
    private readonly statFile: StatFile = bunStatFile,
  ) {}

  async header(): Promise<string> {
    let stamp: string;
    try {
      stamp = await this.statFile(this.path);
      if (stamp !== this.#stamp) {
        const token = (await this.readFile(this.path)).trim();
        if (token === "") throw new Error("file is empty");
        this.#token = token;
        this.#stamp = stamp;
      }
    } catch (err) {
      throw new TransportError(`cannot read token file ${this.path}: ${errorText(err)}`, {
        cause: err,
      });
    }
    return `Bearer ${this.#token}`;
  }
}

export function authSourceFor(creds: Credentials, readFile: ReadTextFile = bunReadTextFile, statFile: StatFile = bunStatFile): AuthSource {
  switch (creds.kind) {
    case "none":
      return { header: async () => undefined };
    case "token": {
      const h = `Bearer ${creds.token}`;
      return { header: async () => h };
    }
    case "basic": {
      const h = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString("base64")}`;
      return { header: async () => h };
    }
    case "tokenFile":
      return new TokenFileSource(creds.path, readFile, statFile);
  }
}
