import { nextInstance } from "@/app/_lib/instance";
import { fromFetchRequest, handleTrpcRequest, toFetchResponse } from "@/server/trpc/http";

export const dynamic = "force-dynamic";

const handler = async (request: Request) => toFetchResponse(await handleTrpcRequest(nextInstance(), fromFetchRequest(request)));

export { handler as GET, handler as POST };
