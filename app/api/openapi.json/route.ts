import { handleApiDocsRequest } from "@/server/http/api-docs";
import { toFetchResponse } from "@/server/trpc/http";

export const GET = () => toFetchResponse(handleApiDocsRequest("GET", "/api/openapi.json"));
