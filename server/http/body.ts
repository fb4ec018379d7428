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
