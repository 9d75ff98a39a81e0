import { writeTar } from "../../oci/tar.ts";
import { sha256Digest } from "../../src/registry/digest.ts";

/**
 * The smallest real "pause" program: a static x86-64 ELF whose whole code is `for (;;) pause();`
 * (mov eax, 34; syscall; jmp back). The CRI stops a sandbox with SIGKILL, so it needs no handler.
 * Built here because the machine has no internet to pull registry.k8s.io/pause and Debian's
 * containerd ships no pause image.
 */
function pauseElfAmd64(): Uint8Array {
  const code = [0xb8, 0x22, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xeb, 0xf7];
  const base = 0x400000;
  const codeOffset = 64 + 56;
  const size = codeOffset + code.length;
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0); // ELF, 64-bit, little endian, SysV
  v.setUint16(16, 2, true); // ET_EXEC
  v.setUint16(18, 62, true); // EM_X86_64
  v.setUint32(20, 1, true); // EV_CURRENT
  v.setBigUint64(24, BigInt(base + codeOffset), true); // entry
  v.setBigUint64(32, 64n, true); // program headers right after the ELF header
  v.setUint16(52, 64, true); // e_ehsize
  v.setUint16(54, 56, true); // e_phentsize
  v.setUint16(56, 1, true); // e_phnum
  v.setUint32(64, 1, true); // PT_LOAD
  v.setUint32(68, 5, true); // R + X
  v.setBigUint64(72, 0n, true); // p_offset
  v.setBigUint64(80, BigInt(base), true); // p_vaddr
  v.setBigUint64(88, BigInt(base), true); // p_paddr
  v.setBigUint64(96, BigInt(size), true); // p_filesz
  v.setBigUint64(104, BigInt(size), true); // p_memsz
  v.setBigUint64(112, 0x1000n, true); // p_align
  out.set(code, codeOffset);
  return out;
}

/**
 * An OCI image layout as a tar (what `ctr images import` reads) holding one image `ref` whose only
 * layer is `/pause` and whose entrypoint runs it; the name rides on `io.containerd.image.name`.
 */
export function pauseImageTar(ref: string): Uint8Array {
  if (process.arch !== "x64") throw new Error(`the test pause image is built for amd64 only, not ${process.arch}`);
  const enc = new TextEncoder();
  const blobs: { path: string; data: Uint8Array; mode: number; mtime: number }[] = [];
  const put = (data: Uint8Array, mediaType: string) => {
    const digest = sha256Digest(data);
    blobs.push({ path: `blobs/sha256/${digest.slice(7)}`, data, mode: 0o644, mtime: 0 });
    return { mediaType, digest, size: data.length };
  };
  const layerTar = writeTar([{ path: "pause", data: pauseElfAmd64(), mode: 0o755, mtime: 0 }]);
  const layer = put(layerTar, "application/vnd.oci.image.layer.v1.tar");
  const config = put(
    enc.encode(
      JSON.stringify({
        architecture: "amd64",
        os: "linux",
        config: { Entrypoint: ["/pause"] },
        rootfs: { type: "layers", diff_ids: [layer.digest] },
      }),
    ),
    "application/vnd.oci.image.config.v1+json",
  );
  const manifest = put(
    enc.encode(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config, layers: [layer] })),
    "application/vnd.oci.image.manifest.v1+json",
  );
  const index = { schemaVersion: 2, manifests: [{ ...manifest, annotations: { "io.containerd.image.name": ref } }] };
  return writeTar([
    { path: "oci-layout", data: enc.encode(JSON.stringify({ imageLayoutVersion: "1.0.0" })), mode: 0o644, mtime: 0 },
    { path: "index.json", data: enc.encode(JSON.stringify(index)), mode: 0o644, mtime: 0 },
    ...blobs,
  ]);
}
