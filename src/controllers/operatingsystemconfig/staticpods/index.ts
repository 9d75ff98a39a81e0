export { checkStaticPods } from "./gate.ts";
export { manifestsDir, StaticPodManifestError, staticPodFiles } from "./manifests.ts";
