import { healthResponse, liveness } from "@/server/health";

export const dynamic = "force-dynamic";

/** Liveness: the process is up and serving HTTP (no database involved, so a database outage never restarts it). */
export function GET() {
  return healthResponse(liveness());
}
