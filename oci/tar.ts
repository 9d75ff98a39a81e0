/** One regular file for a layer tar. */
export interface TarFile {
  readonly path: string;
  readonly data: Uint8Array;
  readonly mode: number;
  /** Seconds since the epoch; fixed for reproducible layers. */
  readonly mtime: number;
}

const BLOCK = 512;

/**
 * A ustar archive of regular files (uid/gid 0, owner "root"), terminated by two zero blocks.
 * Names longer than 100 bytes use the ustar prefix field; that is all an agent image needs.
 */
export function writeTar(files: readonly TarFile[]): Uint8Array {
  const size = files.reduce((n, f) => n + BLOCK + Math.ceil(f.data.length / BLOCK) * BLOCK, 0) + 2 * BLOCK;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const f of files) {
    out.set(header(f), offset);
    out.set(f.data, offset + BLOCK);
    offset += BLOCK + Math.ceil(f.data.length / BLOCK) * BLOCK;
  }
  return out;
}

function header(f: TarFile): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const enc = new TextEncoder();
  const put = (at: number, len: number, text: string) => {
    const bytes = enc.encode(text);
    if (bytes.length > len) throw new Error(`tar field too long: ${text}`);
    h.set(bytes, at);
  };
  const octal = (at: number, len: number, n: number) => put(at, len, `${n.toString(8).padStart(len - 1, "0")}\0`);
  let name = f.path.replace(/^\/+/, "");
  let prefix = "";
  if (enc.encode(name).length > 100) {
    const cut = name.lastIndexOf("/", 155);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
  }
  put(0, 100, name);
  octal(100, 8, f.mode & 0o7777);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, f.data.length);
  octal(136, 12, f.mtime);
  put(148, 8, "        ");
  put(156, 1, "0");
  put(257, 6, "ustar\0");
  put(263, 2, "00");
  put(265, 32, "root");
  put(297, 32, "root");
  put(345, 155, prefix);
  let sum = 0;
  for (const b of h) sum += b;
  put(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return h;
}
