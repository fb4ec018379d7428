// Stands in for server/instance.ts in the published types: the router's context names the
// server's app instance, which a client never sees and must not need to install.
export type Instance = never;
