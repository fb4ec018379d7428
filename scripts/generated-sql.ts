// npx tsx scripts/generated-sql.ts — prints the SQL functions built from the TypeScript
// fragments (server/sql/leases.ts RELEASE_LEASE_FUNCTION). When a fragment they use
// changes, tests/database/generated-functions.test.ts fails until a new migration
// (npm run db:migrate:new -- <name>) holds this output.
import { RELEASE_LEASE_FUNCTION } from "../server/sql/leases";

console.log(RELEASE_LEASE_FUNCTION);
