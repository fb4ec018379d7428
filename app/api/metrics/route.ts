import { getDb } from "@/server/db";
import { handleMetricsRequest } from "@/server/http/metrics";

export const dynamic = "force-dynamic";

export const GET = (request: Request) => handleMetricsRequest(getDb(), request);
