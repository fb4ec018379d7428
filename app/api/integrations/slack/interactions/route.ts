import { after } from "next/server";
import { getDb } from "@/server/db";
import { readBoundedBody } from "@/server/http/body";
import { handleSlackInteraction } from "@/server/integrations/slack/interactions";

export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  const { response, afterwards } = await handleSlackInteraction(getDb(), { headers: request.headers, readBody: (limit) => readBoundedBody(request, limit) });
  if (afterwards) after(afterwards);
  return response;
}
