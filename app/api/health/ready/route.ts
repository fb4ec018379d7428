import { nextInstance } from "@/app/_lib/instance";
import { healthResponse, readiness } from "@/server/health";

export const dynamic = "force-dynamic";

/** Readiness: database reachable, migrations applied, expiry sweep running, not draining (server/health.ts). */
export async function GET() {
  return healthResponse(await readiness(nextInstance()));
}
