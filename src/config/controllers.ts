import * as v from "valibot";
import { durationOr, int64, maybe, notArray, semver, stringOr, section } from "./fields.ts";

/** `controllers.operatingSystemConfig`. */
const operatingSystemConfigControllerSchema = v.object({
  syncPeriod: durationOr(10 * 60_000),
  secretName: stringOr(""),
  /** Canonical semver (`1.33.0`); undefined when absent or null (validation then reports Required). */
  kubernetesVersion: maybe(semver),
  /** Not upstream's (it ignores unknown fields): the stage's size bound in bytes (issue 23; default 2 GiB). */
  stagingMaxBytes: maybe(int64),
});

export const tokenSyncConfigSchema = v.object({
  secretName: stringOr(""),
  path: stringOr(""),
});

/** `controllers.token`. */
const tokenControllerSchema = v.object({
  syncConfigs: maybe(v.array(v.pipe(v.unknown(), notArray, tokenSyncConfigSchema))),
  syncPeriod: durationOr(60 * 60_000),
});

/** `controllers.systemdUnitCheck`. */
export const systemdUnitCheckControllerSchema = v.object({
  syncPeriod: durationOr(60_000),
  stuckThreshold: durationOr(5 * 60_000),
});

export const controllersSchema = v.object({
  operatingSystemConfig: section(operatingSystemConfigControllerSchema),
  token: section(tokenControllerSchema),
  systemdUnitCheck: section(systemdUnitCheckControllerSchema),
});

export type TokenSyncConfig = v.InferOutput<typeof tokenSyncConfigSchema>;
export type SystemdUnitCheckControllerConfig = v.InferOutput<typeof systemdUnitCheckControllerSchema>;
