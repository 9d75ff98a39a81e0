// Import rules checked by dependency-cruiser in `make lint` (design.md, osc-pipeline.md 3.4).
// What it cannot express stays in test/architecture.test.ts (faces, the start-up path, the environment).
const room = "^src/controllers/operatingsystemconfig/";
/** A folder (or file) of the OSC controller room, as a path pattern. */
const r = (...parts) => parts.map((p) => `${room}${p}`).join("|");

/** Within the room, files under `from` may import only `allowed` (and their own folder). */
const roomRule = (name, comment, from, allowed) => ({
  name,
  comment,
  severity: "error",
  // Tests beside the files may drive the whole pipeline (they ship nowhere).
  from: { path: r(from), pathNot: "\\.test\\.ts$" },
  to: { path: room, pathNot: r(from, ...allowed) },
});

module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      comment: "No import cycle anywhere in src/ (type-only imports count: they tie the files' reasoning together).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "controllers-apart",
      comment: "A controller folder never imports another one; what they share lives in shared/ or src/controllers/*.ts.",
      severity: "error",
      from: { path: "^src/controllers/([^/]+)/" },
      to: { path: "^src/controllers/[^/]+/", pathNot: ["^src/controllers/$1/", "^src/controllers/shared/"] },
    },
    {
      name: "shared-imports-no-controller",
      comment: "src/controllers/shared/ is below every controller folder.",
      severity: "error",
      from: { path: "^src/controllers/shared/" },
      to: { path: "^src/controllers/[^/]+/", pathNot: "^src/controllers/shared/" },
    },
    {
      name: "shipped-code-not-from-test",
      comment: "Code that ships never imports test/ (unit tests beside the code may use the doubles).",
      severity: "error",
      from: { path: "^src/", pathNot: "\\.test\\.ts$" },
      to: { path: "^test/" },
    },
    {
      name: "features-apart",
      comment: "An OSC feature never imports another feature: they meet in plugins.ts only.",
      severity: "error",
      from: { path: `${room}features/([^/]+)/` },
      to: { path: `${room}features/`, pathNot: `${room}features/$1/` },
    },
    roomRule("constants-leaf", "constants.ts imports nothing of the room.", "constants\\.ts$", []),
    roomRule("gates-leaf", "gates/ is the contract: it imports nothing of the room.", "gates/", []),
    roomRule("plan-below-apply", "plan/ reads and computes; it knows only the constants.", "plan/", ["constants\\.ts$"]),
    roomRule("apply-below-features", "apply/ runs a plan; gates and extensions plug in.", "apply/", ["plan/", "gates/", "constants\\.ts$"]),
    roomRule("input-stage", "input/ reads the Secret and the Node.", "input/", ["plan/", "apply/", "constants\\.ts$"]),
    roomRule("report-sink", "report/ gets what happened, never a feature (drift comes in as a port).", "report/", [
      "gates/",
      "plan/",
      "apply/",
      "constants\\.ts$",
    ]),
    roomRule("feature-below-pipeline", "A feature sees the contract and the stages below it, never the pipeline.", "features/", [
      "gates/",
      "plan/",
      "apply/",
      "constants\\.ts$",
    ]),
    roomRule("the-list", "plugins.ts binds the features to the contract.", "plugins\\.ts$", [
      "deps\\.ts$",
      "features/",
      "gates/",
      "plan/",
      "apply/",
      "constants\\.ts$",
    ]),
    roomRule("deps-shape", "deps.ts is the shape of the controller's dependencies.", "deps\\.ts$", ["features/", "apply/", "report/"]),
    {
      name: "deps-types-only",
      comment: "deps.ts names types only: it evaluates nothing of the room.",
      severity: "error",
      from: { path: r("deps\\.ts$") },
      to: { path: room, dependencyTypesNot: ["type-only"] },
    },
    roomRule("stage-before-gates", "stage/ fetches a pending version before any gate: it reads like the plan, for the apply.", "stage/", [
      "plan/",
      "apply/(ports|modes|registries)\\.ts$",
      "constants\\.ts$",
    ]),
    roomRule("preview-dry-run", "preview/ plans and runs the same gate list, dry.", "preview/", [
      "plan/",
      "stage/",
      "gates/",
      "plugins\\.ts$",
      "constants\\.ts$",
    ]),
    {
      name: "full-deps-at-the-top",
      comment: "OscControllerDeps (deps.ts) is named only by the room's top-level wiring.",
      severity: "error",
      from: { path: room, pathNot: [r("(plugins|reconcile|offline|apply-failure|index|deps)\\.ts$"), "\\.test\\.ts$"] },
      to: { path: r("deps\\.ts$") },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
