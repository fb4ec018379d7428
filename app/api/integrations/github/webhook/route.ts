import { nextInstance } from "@/app/_lib/instance";
import { readBoundedBody } from "@/server/http/body";
import { handleGithubWebhook } from "@/server/github/webhook";
import { toFetchResponse } from "@/server/trpc/http";

export const dynamic = "force-dynamic";

export const POST = async (request: Request) =>
  toFetchResponse(await handleGithubWebhook(nextInstance().db, { method: request.method, headers: request.headers, readBody: (limit) => readBoundedBody(request, limit) }));
