export { checkStaticPods, staticPodsRequeueMs } from "./gate.ts";
export { configMirrorAnnotation, decodeStaticPod, desiredStaticPods, StaticPodManifestError } from "./manifests.ts";
export { staticPodName, staticPodsVerdict, type StaticPodsVerdict } from "./verdict.ts";
