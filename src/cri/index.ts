export { dialUnix, GrpcError, grpcCodes } from "./grpc.ts";
export type { GrpcChannel, UnaryOptions } from "./grpc.ts";
export { MessageWriter, messageFields, ProtobufError, readFields, stringField, varintField } from "./protobuf.ts";
export type { Field } from "./protobuf.ts";
export { connectCriRuntime, criRuntimeOver } from "./runtime-service.ts";
export type { CallOptions, CriRuntime, PodSandbox } from "./runtime-service.ts";
