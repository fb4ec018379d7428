import { getDb } from "@/server/db";
import { fromFetchRequest, handleTrpcRequest } from "@/server/trpc/http";

export const dynamic = "force-dynamic";

const handler = (request: Request) => handleTrpcRequest(getDb(), fromFetchRequest(request));

export { handler as GET, handler as POST };
