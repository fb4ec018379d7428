import type { IncomingMessage } from "node:http";

/**
 * Reads at most `limit` bytes of a request body, chunk by chunk: null as soon as it is longer
 * (the rest is never read, so no body is ever buffered beyond the limit). Cancelling the
 * stream instead would destroy the socket before the 413 answer could be written.
 */
export async function readBoundedBody(request: Request, limit: number): Promise<Buffer<ArrayBuffer> | null> {
  if (Number(request.headers.get("content-length") ?? 0) > limit) return null;
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > limit) {
      // Stop reading (backpressure holds the rest at the socket); the answer closes the connection.
      reader.releaseLock();
      return null;
    }
    chunks.push(value);
  }
}

/** The same for a request on Node's own HTTP server (no web stream in between). */
export function readBoundedNodeBody(req: IncomingMessage, limit: number): Promise<Buffer<ArrayBuffer> | null> {
  if (Number(req.headers["content-length"] ?? 0) > limit) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off("data", onData).off("end", onEnd).off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        // As above: stop reading; the answer closes the connection.
        done();
        req.pause();
        resolve(null);
      } else chunks.push(chunk);
    };
    const onEnd = () => (done(), resolve(Buffer.concat(chunks)));
    const onError = (error: Error) => (done(), reject(error));
    req.on("data", onData).on("end", onEnd).on("error", onError);
  });
}
