/**
 * @work-graph/contract: the Work Graph API as data. Every procedure's input and output schema
 * (zod; the API's types are their `z.infer`), its kind, the names docs/api.md defines, the event
 * types, and the pure mappings clients share (a GitHub issue → import items). Depends on zod
 * only at run time, so the dashboard's browser code and the agent package (which bundles it)
 * take it without any server code.
 */
export * from "./constants";
export * from "./github";
export * from "./inputs";
export * from "./outputs";
export * from "./router";
