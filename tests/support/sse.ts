/** One Server-Sent Events message as a raw HTTP client sees it. */
export interface SseMessage {
  event: string;
  id: string | null;
  data: string;
}

/**
 * A plain fetch-based SSE reader (Node 20 has no EventSource), so tests see exactly the wire
 * format an agent in any language gets: `GET /api/trpc/<path>?input=…`, optional Last-Event-ID.
 */
export async function openSse(url: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: abort.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const queue: SseMessage[] = [];
  let buffer = "";
  let ended = false;

  async function fill(): Promise<boolean> {
    try {
      const chunk = await reader.read();
      if (chunk.done) return false;
      buffer += decoder.decode(chunk.value, { stream: true });
    } catch {
      return false;
    }
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const message: SseMessage = { event: "message", id: null, data: "" };
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        if (colon === 0) continue; // comment
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") message.event = value;
        else if (field === "id") message.id = value;
        else if (field === "data") message.data = message.data ? `${message.data}\n${value}` : value;
      }
      queue.push(message);
    }
    return true;
  }

  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    /** The next message of type `event` (or of one of several types; others, like pings, are skipped); null once the stream ended. */
    async next(event: string | string[] = "message"): Promise<SseMessage | null> {
      const wanted = typeof event === "string" ? [event] : event;
      for (;;) {
        const index = queue.findIndex((message) => wanted.includes(message.event));
        if (index >= 0) return queue.splice(0, index + 1).at(-1)!;
        if (ended || !(await fill())) {
          ended = true;
          return null;
        }
      }
    },
    close() {
      abort.abort();
    },
  };
}
