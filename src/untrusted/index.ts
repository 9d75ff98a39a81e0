export { issuesMessage, issueText, kindOf } from "./issue-text.ts";
export { quoteName } from "./quote-name.ts";
export { urlForMessage } from "./url.ts";
