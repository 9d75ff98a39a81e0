export { dialUnix, GrpcError } from "./grpc.ts";
export type { GrpcChannel } from "./grpc.ts";
export { MessageWriter, readFields, stringField } from "./protobuf.ts";
export { connectCriRuntime } from "./runtime-service.ts";
export type { CriRuntime, PodSandbox } from "./runtime-service.ts";
