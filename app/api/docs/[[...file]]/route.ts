import { handleApiDocsRequest } from "@/server/http/api-docs";
import { toFetchResponse } from "@/server/trpc/http";

export const GET = (request: Request) => toFetchResponse(handleApiDocsRequest("GET", new URL(request.url).pathname));
