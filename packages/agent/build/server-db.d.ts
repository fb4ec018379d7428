// Stands in for server/db.ts in the published types: the router's context names the server's
// database client, which a client never sees and must not need to install.
export type Db = never;
export type Executor = never;
