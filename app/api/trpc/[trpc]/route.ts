import { getDb } from "@/server/db";
import { handleTrpcRequest } from "@/server/trpc/http";

export const dynamic = "force-dynamic";

const handler = (request: Request) => handleTrpcRequest(getDb(), request);

export { handler as GET, handler as POST };
