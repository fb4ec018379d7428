import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { databaseTest, type Actors } from "../support/fixtures";

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with the n-th request (0-based) it gets on a path. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

/** A real HTTP receiver on 127.0.0.1 that records every request and answers as told per path. */
export async function startReceiver() {
  const received: Received[] = [];
  const behaviours = new Map<string, (n: number) => Answer>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      const n = received.filter((r) => r.path === path).length;
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const answer = behaviours.get(path)?.(n) ?? { status: 200, body: "ok" };
      if (answer === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      res.end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    on(path: string, behaviour: (n: number) => Answer) {
      behaviours.set(path, behaviour);
      return `${base}${path}`;
    },
    at: (path: string) => received.filter((r) => r.path === path),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** databaseTest with `receiver`: one webhook receiver for the file. */
export const webhookTest = databaseTest().extend("receiver", { scope: "file" }, async ({}, { onCleanup }) => {
  const receiver = await startReceiver();
  onCleanup(() => receiver.close());
  return receiver;
});

/** What a receiver must do (docs/webhooks.md): recompute the HMAC over "<t>.<raw body>". */
export function signatureIsValid(secret: string, header: string | string[] | undefined, rawBody: string): boolean {
  const match = typeof header === "string" ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, "hex"));
}

/**
 * Resolves once a dispatcher has claimed, sent and recorded a test event queued now on a
 * webhook of its own (created on first use). Claims take the deliveries that are due oldest
 * first, so every delivery due before this call has been claimed by then too: an absence
 * checked afterwards ("nothing else arrived") is a fact, not a matter of having slept long enough.
 */
export function deliveryRounds(receiver: Receiver, admin: Actors["admin"]) {
  let sentinel: Promise<{ id: string }> | undefined;
  return async function afterADeliveryRound() {
    sentinel ??= admin.webhooks.create({ url: receiver.on("/delivery-round", () => ({ status: 200 })), events: ["webhook.test"] });
    const { id: webhookId } = await sentinel;
    const queued = await admin.webhooks.test({ id: webhookId });
    await expect.poll(async () => (await admin.webhooks.deliveries({ webhookId })).find((delivery) => delivery.id === queued.id)?.status).toBe("delivered");
  };
}
