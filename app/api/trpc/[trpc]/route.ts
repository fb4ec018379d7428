import { getDb } from "@/server/db";
import { fromFetchRequest, handleTrpcRequest, toFetchResponse } from "@/server/trpc/http";

export const dynamic = "force-dynamic";

const handler = async (request: Request) => toFetchResponse(await handleTrpcRequest(getDb(), fromFetchRequest(request)));

export { handler as GET, handler as POST };
