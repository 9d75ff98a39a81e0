export { checkStaticPods, staticPodsRequeueMs } from "./gate.ts";
export { configMirrorAnnotation, decodeStaticPod, desiredStaticPods, manifestsDir, StaticPodManifestError, staticPodFiles } from "./manifests.ts";
export { staticPodName, staticPodsVerdict, type StaticPodsVerdict } from "./verdict.ts";
