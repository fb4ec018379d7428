import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** Signs a request body as Slack signs what it sends: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret. */
export function slackSignature(secret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

/** One Web API call the fake received: the method (`chat.postMessage`…) and its arguments, JSON fields parsed. */
export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  at: number;
}

export interface SlackUser {
  id: string;
  name: string;
  realName: string;
  displayName: string;
  email?: string;
}

type Text = { type: string; text: string };
type Element = { type: string; text?: Text | string; action_id?: string; value?: string; url?: string };
type Block = { type: string; text?: Text; elements?: Element[] };

/** Block Kit's documented limits, which Slack enforces with `invalid_blocks`. */
function blocksWithinLimits(blocks: unknown): boolean {
  if (!Array.isArray(blocks) || blocks.length > 50) return false;
  const textOk = (text: Text | string | undefined, max: number) => text === undefined || (typeof text === "string" ? text : text.text).length <= max;
  return (blocks as Block[]).every((block) => {
    if (!textOk(block.text, 3000)) return false;
    if (block.type === "actions") {
      return (block.elements ?? []).length <= 25 && (block.elements ?? []).every((e) =>
        textOk(e.text, 75) && (e.value ?? "").length <= 2000 && (e.action_id ?? "").length <= 255 && (e.url ?? "").length <= 3000);
    }
    if (block.type === "context") return (block.elements ?? []).length <= 10 && (block.elements ?? []).every((e) => textOk(e.text, 3000));
    return true;
  });
}

/**
 * A fake of Slack's Web API on 127.0.0.1 that the real @slack/web-api client talks to (its
 * `slackApiUrl` pointed here): `POST /api/<method>`, form-encoded arguments (objects as JSON),
 * the bot token as a bearer token, and answers shaped as Slack's (`{ ok, … }`, `ok: false` with
 * an `error` code, `invalid_blocks` beyond Block Kit's limits). It records every call it accepted; `down` makes it answer 503 to everything
 * (an outage), and those attempts are counted in `refused`.
 */
export async function startFakeSlack(botToken: string, port = 0) {
  const calls: SlackCall[] = [];
  const users = new Map<string, SlackUser>();
  let down = false;
  let refused = 0;
  let ts = 1_700_000_000;

  const answer = (method: string, args: Record<string, unknown>): Record<string, unknown> => {
    if (args.blocks !== undefined && !blocksWithinLimits(args.blocks)) return { ok: false, error: "invalid_blocks" };
    switch (method) {
      case "chat.postMessage":
        if (typeof args.channel !== "string") return { ok: false, error: "channel_not_found" };
        ts += 1;
        return { ok: true, channel: args.channel, ts: `${ts}.000100`, message: { text: args.text, blocks: args.blocks } };
      case "chat.update":
        return { ok: true, channel: args.channel, ts: args.ts, text: args.text };
      case "chat.postEphemeral":
        return { ok: true, message_ts: `${ts}.000200` };
      case "views.open":
        return { ok: true, view: { id: `V${calls.length}`, ...(args.view as object) } };
      case "users.info": {
        const user = users.get(String(args.user));
        if (!user) return { ok: false, error: "user_not_found" };
        return {
          ok: true,
          user: { id: user.id, name: user.name, real_name: user.realName, profile: { display_name: user.displayName, real_name: user.realName, email: user.email } },
        };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (down) {
        refused++;
        res.writeHead(503, { "content-type": "text/plain" });
        res.end("service unavailable");
        return;
      }
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0]!;
      const reply = (body: Record<string, unknown>) => {
        res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${botToken}`) return reply({ ok: false, error: "invalid_auth" });
      const args: Record<string, unknown> = {};
      for (const [key, value] of new URLSearchParams(Buffer.concat(chunks).toString("utf8"))) {
        args[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
      }
      calls.push({ method, args, at: Date.now() });
      reply(answer(method, args));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    calls,
    of: (method: string) => calls.filter((call) => call.method === method),
    addUser: (user: SlackUser) => users.set(user.id, user),
    setDown(value: boolean) {
      down = value;
    },
    refused: () => refused,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export type FakeSlack = Awaited<ReturnType<typeof startFakeSlack>>;
