// The unary gRPC client's own edges against a plain node:http2 server on a unix socket: deadlines,
// trailers-only errors, HTTP errors and a clean response — what containerd does not do on request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dialUnix, GrpcError, type GrpcChannel } from "../../src/cri/index.ts";

let dir = "";
let server: Http2Server;
let channel: GrpcChannel;
const seen: Record<string, string | undefined> = {};

const frame = (msg: Uint8Array) => {
  const out = new Uint8Array(5 + msg.length);
  new DataView(out.buffer).setUint32(1, msg.length);
  out.set(msg, 5);
  return out;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gna-grpc-"));
  server = createServer();
  server.on("stream", (stream: ServerHttp2Stream, headers) => {
    const path = String(headers[":path"]);
    seen["timeout"] = headers["grpc-timeout"] as string | undefined;
    seen["contentType"] = headers["content-type"] as string | undefined;
    stream.on("data", () => {});
    stream.on("end", () => {
      if (path === "/test.Svc/Echo") {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(frame(Uint8Array.from([0x0a, 0x02, 0x68, 0x69])));
      } else if (path === "/test.Svc/Missing") {
        stream.respond(
          { ":status": 200, "content-type": "application/grpc", "grpc-status": "5", "grpc-message": "sandbox%20%22x%22%20not%20found" },
          { endStream: true },
        );
      } else if (path === "/test.Svc/Http") {
        stream.respond({ ":status": 503 }, { endStream: true });
      }
      // /test.Svc/Hang: never answers
    });
  });
  await new Promise<void>((resolve) => server.listen(join(dir, "grpc.sock"), resolve));
  channel = await dialUnix(`unix://${join(dir, "grpc.sock")}`, 2_000);
});
afterAll(async () => {
  channel?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe("unary gRPC over HTTP/2", () => {
  test("should send a framed request with its deadline and return the response message", async () => {
    const res = await channel.unary("/test.Svc/Echo", Uint8Array.from([1]), { timeoutMs: 2_000 });
    expect([...res]).toEqual([0x0a, 0x02, 0x68, 0x69]);
    expect(seen["timeout"]).toBe("2000m");
    expect(seen["contentType"]).toBe("application/grpc");
  });

  test("should turn a trailers-only response into a GrpcError with the decoded message", async () => {
    const err = await channel.unary("/test.Svc/Missing", new Uint8Array(), { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GrpcError);
    expect([(err as GrpcError).code, (err as GrpcError).details]).toEqual([5, 'sandbox "x" not found']);
  });

  test("should fail with DeadlineExceeded when the server does not answer in time", async () => {
    const err = await channel.unary("/test.Svc/Hang", new Uint8Array(), { timeoutMs: 200 }).catch((e: unknown) => e);
    expect((err as GrpcError).code).toBe(4);
  });

  test("should fail with Cancelled when the caller aborts", async () => {
    const ac = new AbortController();
    const pending = channel.unary("/test.Svc/Hang", new Uint8Array(), { timeoutMs: 5_000, signal: ac.signal });
    ac.abort();
    expect(((await pending.catch((e: unknown) => e)) as GrpcError).code).toBe(1);
  });

  test("should report a non-200 HTTP status as Unavailable", async () => {
    const err = await channel.unary("/test.Svc/Http", new Uint8Array(), { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect((err as GrpcError).code).toBe(14);
    expect((err as GrpcError).details).toBe("unexpected HTTP status 503");
  });
});
