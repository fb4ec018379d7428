/**
 * `npm run db:url`: prints the URL of this checkout's embedded PostgreSQL (WORK_GRAPH_DATA_DIR,
 * default .work-graph/), so another app instance can use it: `DATABASE_URL=$(npm run -s db:url) npm start`.
 * The URL holds the generated password; treat it as a secret.
 */
import path from "node:path";
import { dataDir } from "../server/config";
import { embeddedDatabaseUrl } from "../server/database/embedded";
import { projectRoot } from "../server/database/migrate";

const dataDirPath = path.resolve(projectRoot(), dataDir());
const url = embeddedDatabaseUrl(path.join(dataDirPath, "postgres"));
if (!url) {
  console.error(`no embedded PostgreSQL in ${dataDirPath} yet: run \`npm start\` once first`);
  process.exit(1);
}
console.log(url);
