import { after } from "next/server";
import { nextInstance } from "@/app/_lib/instance";
import { readBoundedBody } from "@/server/http/body";
import { handleSlackInteraction } from "@/server/slack/interactions";

export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  const { response, afterwards } = await handleSlackInteraction(nextInstance().db, { headers: request.headers, readBody: (limit) => readBoundedBody(request, limit) });
  if (afterwards) after(afterwards);
  return response;
}
