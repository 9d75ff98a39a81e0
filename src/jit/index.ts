// How the agent's own functions are compiled by JavaScriptCore (which tiers they may reach).
export { keepOutOfTopTier } from "./top-tier.ts";
