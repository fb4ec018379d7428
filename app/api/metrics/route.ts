import { nextInstance } from "@/app/_lib/instance";
import { handleMetricsRequest } from "@/server/http/metrics";

export const dynamic = "force-dynamic";

export const GET = (request: Request) => handleMetricsRequest(nextInstance().db, request);
