/**
 * The waiting agents of the waiter benchmark, in their own process (so their memory is not
 * counted as the server's): one waiting `leases.claim` per token over plain HTTP (one socket
 * each), re-sent when it comes back empty. Input (JSON in argv[3]): { tokens, waitSeconds }.
 * Prints one JSON line per claimed item: { id, at } (`at` = wall clock in ms, sub-ms precision).
 */
const [url, input] = process.argv.slice(2);
const { tokens, waitSeconds } = JSON.parse(input!) as { tokens: string[]; waitSeconds: number };
const wallClock = () => performance.timeOrigin + performance.now();

async function waitForOne(token: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${url}/api/trpc/leases.claim`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ waitSeconds, durationSeconds: 600 }),
    });
    const at = wallClock();
    const body = (await response.json()) as { result?: { data: { workItem: { id: string } } | null }; error?: unknown };
    if (body.error) throw new Error(JSON.stringify(body.error));
    const claimed = body.result?.data;
    if (claimed) {
      console.log(JSON.stringify({ id: claimed.workItem.id, at }));
      return;
    }
  }
}

await Promise.all(tokens.map(waitForOne));
export {};
