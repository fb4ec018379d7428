import { getDb } from "@/server/db";
import { readBoundedBody } from "@/server/http/body";
import { handleGithubWebhook } from "@/server/integrations/github/webhook";
import { toFetchResponse } from "@/server/trpc/http";

export const dynamic = "force-dynamic";

export const POST = async (request: Request) =>
  toFetchResponse(await handleGithubWebhook(getDb(), { method: request.method, headers: request.headers, readBody: (limit) => readBoundedBody(request, limit) }));
