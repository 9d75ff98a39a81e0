export { checkStaticPods } from "./gate.ts";
export { manifestsDir, staticPodFiles, StaticPodManifestError } from "./manifests.ts";
