import { describe, expect, vi } from "vitest";
import { slackSettings } from "../../server/config";
import { servesApi } from "../../server/http/node-api";
import { slackApp, slackResponder } from "../../server/integrations/slack/client";
import { SLACK_INTERACTIONS_PATH } from "../../server/integrations/slack/interactions";
import { MODAL_CALLBACK, OPEN_MODAL_ACTION } from "../../server/integrations/slack/messages";
import { insertPerson } from "../support/factories";
import {
  askQuestion,
  buttonClick,
  buttonsOf,
  CHANNEL,
  settingsFor,
  messageOf,
  postedMessage,
  modalSubmission,
  postInteraction,
  postsOf,
  PUBLIC_URL,
  signedInteraction,
  slackTest,
  updatesOf,
} from "./support";

/*
 * Issue 28 (API.md v3 "Answering from Slack"): the real @slack/web-api client against a fake
 * Slack Web API on loopback, interactions signed as Slack signs them, sent over HTTP to the
 * endpoint as `npm start` serves it (server/http/node-api.ts).
 */

const it = slackTest;

type Block = { type: string; text?: { text: string }; elements?: { text?: string }[] };
const blockText = (blocks: unknown) => (blocks as Block[]).map((b) => [b.text?.text ?? "", ...(b.elements ?? []).map((e) => e.text ?? "")].join(" ")).join("\n");

describe("posting an attention request to Slack", () => {
  it("posts it within 3 s through the outbox: question, context, item link, a button per option and Answer…", async ({ people, slack, sql, slackWebhookId }) => {
    // A running server has made Slack calls before: one test message first, so the 3 s measure no module loading.
    const warmUp = await people.admin.webhooks.test({ id: slackWebhookId });
    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: slackWebhookId })).find((d) => d.id === warmUp.id)?.status).toBe("delivered");
    const asked = Date.now();
    const request = await askQuestion(people, "post-1", { question: "Which <database> & why?", options: ["Postgres", "SQLite"], context: "The service stores 10 GB." });
    await expect.poll(() => postsOf(slack, request.id).length, { timeout: 3_000 }).toBe(1);
    const [post] = postsOf(slack, request.id);
    expect(post!.at - asked).toBeLessThan(3_000);
    expect(post!.args.channel).toBe(CHANNEL);
    const text = blockText(post!.args.blocks);
    expect(text).toContain("Which &lt;database&gt; &amp; why?");
    expect(text).toContain("The service stores 10 GB.");
    expect(text).toContain(`<${PUBLIC_URL}/items/post-1|Item post-1>`);
    const buttons = buttonsOf(post!);
    expect(buttons.map((b) => b.text.text)).toEqual(["Postgres", "SQLite", "Answer…", "Open in Work Graph"]);
    expect(buttons.find((b) => b.text.text === "Open in Work Graph")!.url).toBe(`${PUBLIC_URL}/items/post-1`);
    expect(post!.args.text).toContain("Which &lt;database&gt; &amp; why?"); // the notification text is mrkdwn too

    // Recorded as a delivery of the Slack app's webhook, which the Webhooks page lists.
    const [hook] = (await people.admin.webhooks.list()).filter((w) => w.id === slackWebhookId);
    expect(hook).toMatchObject({ format: "slack_app", url: slack.apiUrl, events: ["attention.requested", "attention.resolved"] });
    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: slackWebhookId })).find((d) => d.eventType === "attention.requested" && d.status === "delivered")).toBeTruthy();
    expect(await postedMessage(sql, request.id)).toEqual({ channel: CHANNEL, ts: expect.stringMatching(/^\d+\.\d+$/) });
  });

  it("keeps within Slack's Block Kit limits for the longest question, context and options the API accepts", async ({ people, slack, sql }) => {
    const long = "a & b < c > ".repeat(20_000 / 12);
    const options = Array.from({ length: 50 }, (_, n) => `${n} ${"&".repeat(1_990)}`);
    const request = await askQuestion(people, "long-1", { question: long, context: long, options });
    await expect.poll(async () => messageOf(sql, request.id)).toBeTruthy();
    const [post] = postsOf(slack, request.id);
    expect(buttonsOf(post!)).toHaveLength(25); // 23 options, Answer…, the link
    await people.operator.attention.resolve({ id: request.id, resolution: long });
    const { ts } = await postedMessage(sql, request.id);
    await expect.poll(() => updatesOf(slack, ts).length).toBe(1);
  });
});

describe("answering from Slack", () => {
  it("an option button resolves the request as slack:<user id> and the message then shows the answer without buttons", async ({ people, slack, sql, server }) => {
    slack.addUser({ id: "U0ALICE", name: "alice", realName: "Alice Example", displayName: "alice", email: "alice@example.com" });
    const request = await askQuestion(people, "button-1", { question: "Ship it?", options: ["Yes", "No"] });
    await expect.poll(() => postsOf(slack, request.id).length).toBe(1);
    const yes = buttonsOf(postsOf(slack, request.id)[0]!).find((b) => b.text.text === "Yes")!;

    const answer = await postInteraction(server.url, signedInteraction(buttonClick("U0ALICE", { action_id: yes.action_id, value: yes.value! })));
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(3_000);
    await expect.poll(async () => (await people.admin.attention.get({ id: request.id })).status).toBe("resolved");
    expect(await people.admin.attention.get({ id: request.id })).toMatchObject({ resolution: "Yes", resolvedBy: "slack:U0ALICE", resolvedByName: "alice" });
    expect(slack.of("users.info").map((c) => c.args.user)).toContain("U0ALICE");

    const { ts } = await postedMessage(sql, request.id);
    await expect.poll(() => updatesOf(slack, ts).length).toBe(1);
    const [update] = updatesOf(slack, ts);
    expect(update!.args.channel).toBe(CHANNEL);
    expect(blockText(update!.args.blocks)).toContain("Answered by <@U0ALICE>:* Yes");
    expect(buttonsOf(update!)).toEqual([]);
    expect(slack.of("chat.postEphemeral")).toEqual([]);
  });

  it("an answer by a Slack user whose email is a known person is attributed to that person, by name", async ({ people, slack, sql, server }) => {
    await insertPerson(sql, { subject: "dana-1", email: "Dana@Example.com", name: "Dana Li", role: "operator" });
    await insertPerson(sql, { subject: "gone-1", email: "gone@example.com", name: "Gone Person", role: "operator", disabled: true });
    slack.addUser({ id: "U0DANALI", name: "dana", realName: "Dana Li", displayName: "dana", email: "dana@example.com" });
    slack.addUser({ id: "U0GONE", name: "gone", realName: "Gone", displayName: "gone-slack", email: "gone@example.com" });
    const known = await askQuestion(people, "person-1", { question: "Merge?", options: ["Yes"] });
    const disabled = await askQuestion(people, "person-2", { question: "Deploy?", options: ["Yes"] });
    for (const [request, user] of [[known, "U0DANALI"], [disabled, "U0GONE"]] as const) {
      await expect.poll(() => postsOf(slack, request.id).length).toBe(1);
      const yes = buttonsOf(postsOf(slack, request.id)[0]!).find((b) => b.text.text === "Yes")!;
      expect((await postInteraction(server.url, signedInteraction(buttonClick(user, { action_id: yes.action_id, value: yes.value! })))).status).toBe(200);
      await expect.poll(async () => (await people.admin.attention.get({ id: request.id })).status).toBe("resolved");
    }
    expect(await people.admin.attention.get({ id: known.id })).toMatchObject({ resolvedBy: "person:Dana@Example.com", resolvedByName: "Dana Li" });
    const { rows } = await sql.query<{ actor: string }>("SELECT actor FROM events WHERE type = 'attention.resolved' AND data->>'requestId' = $1", [known.id]);
    expect(rows.map((row) => row.actor)).toEqual(["person:Dana@Example.com"]);
    // A disabled person is not answered for: the answer stays the Slack user's.
    expect(await people.admin.attention.get({ id: disabled.id })).toMatchObject({ resolvedBy: "slack:U0GONE", resolvedByName: "gone-slack" });
    const { ts } = await postedMessage(sql, known.id);
    await expect.poll(() => updatesOf(slack, ts).length).toBe(1);
    expect(blockText(updatesOf(slack, ts)[0]!.args.blocks)).toContain("Answered by Dana Li:* Yes");
  });

  it("Answer… opens a modal with a text field; its submission resolves the request", async ({ people, slack, sql, server }) => {
    const request = await askQuestion(people, "modal-1", { question: "What should the release be called?" });
    await expect.poll(() => postsOf(slack, request.id).length).toBe(1);
    const open = buttonsOf(postsOf(slack, request.id)[0]!).find((b) => b.action_id === OPEN_MODAL_ACTION)!;
    expect(open.text.text).toBe("Answer…");

    const click = buttonClick("U0BOB", { action_id: open.action_id, value: open.value! });
    expect((await postInteraction(server.url, signedInteraction(click))).status).toBe(200);
    await expect.poll(() => slack.of("views.open").filter((c) => c.args.trigger_id === click.trigger_id).length).toBe(1);
    const view = slack.of("views.open").find((c) => c.args.trigger_id === click.trigger_id)!.args.view as {
      type: string; callback_id: string; private_metadata: string; blocks: { type: string; element?: { type: string } }[];
    };
    expect(view.type).toBe("modal");
    expect(view.blocks.find((b) => b.type === "input")!.element!.type).toBe("plain_text_input");
    expect(view.callback_id).toBe(MODAL_CALLBACK);

    const submitted = await postInteraction(server.url, signedInteraction(modalSubmission("U0BOB", view, "  Aurora  ")));
    expect(submitted).toMatchObject({ status: 200, text: "" }); // an empty 200 closes the modal
    await expect.poll(async () => (await people.admin.attention.get({ id: request.id })).status).toBe("resolved");
    // users.info does not know U0BOB: still attributed to the Slack user.
    expect(await people.admin.attention.get({ id: request.id })).toMatchObject({ resolution: "Aurora", resolvedBy: "slack:U0BOB" });
    const { ts } = await postedMessage(sql, request.id);
    await expect.poll(() => updatesOf(slack, ts).length).toBe(1);
    expect(blockText(updatesOf(slack, ts)[0]!.args.blocks)).toContain("Answered by <@U0BOB>:* Aurora");
  });

  it("an answer given in the dashboard updates the Slack message the same way", async ({ people, slack, sql }) => {
    const request = await askQuestion(people, "dashboard-1", { question: "Merge now?", options: ["Merge", "Wait"] });
    await expect.poll(async () => messageOf(sql, request.id)).toBeTruthy();
    await people.operator.attention.resolve({ id: request.id, resolution: "Wait for CI" });
    const { ts } = await postedMessage(sql, request.id);
    await expect.poll(() => updatesOf(slack, ts).length).toBe(1);
    const text = blockText(updatesOf(slack, ts)[0]!.args.blocks);
    expect(text).toContain("Wait for CI");
    expect(text).toMatch(/Answered by operator:/);
    expect(buttonsOf(updatesOf(slack, ts)[0]!)).toEqual([]);
  });

  it("a second answer changes nothing and tells the clicker, only them, who answered first", async ({ people, slack, server }) => {
    const request = await askQuestion(people, "second-1", { question: "Roll back?", options: ["Roll back", "Keep"] });
    await expect.poll(() => postsOf(slack, request.id).length).toBe(1);
    const [rollBack, keep] = buttonsOf(postsOf(slack, request.id)[0]!);
    await postInteraction(server.url, signedInteraction(buttonClick("U0FIRST", { action_id: rollBack!.action_id, value: rollBack!.value! })));
    await expect.poll(async () => (await people.admin.attention.get({ id: request.id })).status).toBe("resolved");

    const late = await postInteraction(server.url, signedInteraction(buttonClick("U0LATE", { action_id: keep!.action_id, value: keep!.value! })));
    expect(late.status).toBe(200);
    await expect.poll(() => slack.of("chat.postEphemeral").filter((c) => c.args.user === "U0LATE").length).toBe(1);
    const [told] = slack.of("chat.postEphemeral").filter((c) => c.args.user === "U0LATE");
    expect(told!.args).toMatchObject({ channel: CHANNEL, user: "U0LATE" });
    expect(String(told!.args.text)).toContain("already answered by <@U0FIRST>");
    expect(String(told!.args.text)).toContain("Roll back");
    expect(await people.admin.attention.get({ id: request.id })).toMatchObject({ resolution: "Roll back", resolvedBy: "slack:U0FIRST" });
    const { items: events } = await people.admin.events.list({ workItemId: "second-1" });
    expect(events.filter((e) => e.type === "attention.resolved")).toHaveLength(1);

    // Answer… on the answered request: no modal, the same note.
    const open = buttonsOf(postsOf(slack, request.id)[0]!).find((b) => b.action_id === OPEN_MODAL_ACTION)!;
    const click = buttonClick("U0LATER", { action_id: open.action_id, value: open.value! });
    await postInteraction(server.url, signedInteraction(click));
    await expect.poll(() => slack.of("chat.postEphemeral").filter((c) => c.args.user === "U0LATER").length).toBe(1);
    expect(slack.of("views.open").filter((c) => c.args.trigger_id === click.trigger_id)).toEqual([]);
  });
});

describe("the interactions endpoint's signature check", () => {
  it("refuses a bad signature, a wrong secret, an old or future timestamp and missing headers with 401, changing nothing", async ({ people, slack, server }) => {
    const request = await askQuestion(people, "sig-1", { question: "Deploy?", options: ["Deploy"] });
    await expect.poll(() => postsOf(slack, request.id).length).toBe(1);
    const [deploy] = buttonsOf(postsOf(slack, request.id)[0]!);
    const click = buttonClick("U0MALLORY", { action_id: deploy!.action_id, value: deploy!.value! });
    const now = Math.floor(Date.now() / 1000);
    const good = signedInteraction(click);

    const attempts = [
      { ...good, headers: { ...good.headers, "x-slack-signature": good.headers["x-slack-signature"].replace(/.$/, (c) => (c === "0" ? "1" : "0")) } },
      signedInteraction(click, { secret: "not-the-signing-secret" }),
      signedInteraction(click, { timestamp: now - 301 }),
      signedInteraction(click, { timestamp: now + 301 }),
      { body: good.body, headers: { "content-type": good.headers["content-type"] } },
      // The signature covers the raw body: the same signature on another body fails.
      { ...good, body: good.body.replace("U0MALLORY", "U0ALICE") },
    ];
    for (const attempt of attempts) {
      const answer = await postInteraction(server.url, attempt);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toMatchObject({ reason: "UNAUTHENTICATED" });
    }
    // A timestamp just inside the window is accepted (the window is 300 s, not less).
    expect((await postInteraction(server.url, signedInteraction(buttonClick("U0CAROL", { action_id: deploy!.action_id, value: deploy!.value! }), { timestamp: now - 240 }))).status).toBe(200);
    await expect.poll(async () => (await people.admin.attention.get({ id: request.id })).resolvedBy).toBe("slack:U0CAROL");
    expect(slack.of("users.info").filter((c) => c.args.user === "U0MALLORY")).toEqual([]);
  });

  it("a retried or replayed interaction (X-Slack-Retry-Num) is answered once", async ({ people, slack, server }) => {
    const request = await askQuestion(people, "retry-1", { question: "Retry?", options: ["Once"] });
    await expect.poll(() => postsOf(slack, request.id).length).toBe(1);
    const [once] = buttonsOf(postsOf(slack, request.id)[0]!);
    const delivery = signedInteraction(buttonClick("U0RETRY", { action_id: once!.action_id, value: once!.value! }));
    const answers = await Promise.all([
      postInteraction(server.url, delivery),
      postInteraction(server.url, delivery, { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect((await postInteraction(server.url, delivery, { "x-slack-retry-num": "2", "x-slack-retry-reason": "http_timeout" })).status).toBe(200);
    await expect.poll(async () => (await people.admin.attention.get({ id: request.id })).status).toBe("resolved");
    await expect.poll(() => slack.of("users.info").filter((c) => c.args.user === "U0RETRY").length).toBe(3);
    const { items: events } = await people.admin.events.list({ workItemId: "retry-1" });
    expect(events.filter((e) => e.type === "attention.resolved")).toHaveLength(1);
    // The retries are the same interaction: nobody is told "already answered" (a later, different click is).
    await postInteraction(server.url, signedInteraction(buttonClick("U0OTHER", { action_id: once!.action_id, value: once!.value! })));
    await expect.poll(() => slack.of("chat.postEphemeral").filter((c) => c.args.user === "U0OTHER").length).toBe(1);
    expect(slack.of("chat.postEphemeral").filter((c) => c.args.user === "U0RETRY")).toEqual([]);
  });

  it("is served by the Node API (so also under --api-only), and answers 404 while the Slack app is off", async ({ server }) => {
    expect(servesApi(SLACK_INTERACTIONS_PATH)).toBe(true);
    vi.stubEnv("WORK_GRAPH_SLACK_BOT_TOKEN", "");
    const answer = await postInteraction(server.url, signedInteraction({ type: "block_actions" }));
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({ reason: "NOT_FOUND" });
  });
});

describe("who answered", () => {
  it("slackResponder gives slack:<id>, the profile's display name and email; without users.info, the interaction's user name", async ({ slack }) => {
    const { client } = slackApp(settingsFor(slack));
    slack.addUser({ id: "U0DANA", name: "dana", realName: "Dana Example", displayName: "Dana", email: "dana@example.com" });
    expect(await slackResponder(client, { id: "U0DANA", name: "dana" })).toEqual({ actor: "slack:U0DANA", name: "Dana", email: "dana@example.com" });
    slack.addUser({ id: "U0ERIN", name: "erin", realName: "Erin Example", displayName: "" });
    expect(await slackResponder(client, { id: "U0ERIN" })).toEqual({ actor: "slack:U0ERIN", name: "Erin Example", email: null });
    expect(await slackResponder(client, { id: "U0UNKNOWN", name: "ghost" })).toEqual({ actor: "slack:U0UNKNOWN", name: "ghost", email: null });
  });
});

describe("per-project channels", () => {
  it("WORK_GRAPH_SLACK_CHANNELS sends a project's requests to its channel; other projects go to WORK_GRAPH_SLACK_CHANNEL", async ({ people, slack, sql, server }) => {
    vi.stubEnv("WORK_GRAPH_SLACK_CHANNELS", " ops=C0OPS , web=C0WEB");
    expect([...slackSettings()!.channels]).toEqual([["ops", "C0OPS"], ["web", "C0WEB"]]);
    vi.stubEnv("WORK_GRAPH_SLACK_CHANNELS", "ops=C0OPS");

    await people.admin.projects.create({ id: "ops", name: "Operations" });
    const inOps = await askQuestion(people, "ops-1", { question: "Restart the cluster?", options: ["Restart"] }, "ops");
    const elsewhere = await askQuestion(people, "default-1", { question: "Rename the repo?", options: ["Rename"] });
    await expect.poll(() => postsOf(slack, inOps.id).length).toBe(1);
    await expect.poll(() => postsOf(slack, elsewhere.id).length).toBe(1);
    expect(postsOf(slack, inOps.id)[0]!.args.channel).toBe("C0OPS");
    expect(postsOf(slack, elsewhere.id)[0]!.args.channel).toBe(CHANNEL);

    const [restart] = buttonsOf(postsOf(slack, inOps.id)[0]!);
    await postInteraction(server.url, signedInteraction(buttonClick("U0OPS", { action_id: restart!.action_id, value: restart!.value! }, "C0OPS")));
    await expect.poll(async () => (await people.admin.attention.get({ id: inOps.id })).resolvedBy).toBe("slack:U0OPS");
    const { channel, ts } = await postedMessage(sql, inOps.id);
    expect(channel).toBe("C0OPS");
    await expect.poll(() => updatesOf(slack, ts).map((call) => call.args.channel)).toEqual(["C0OPS"]);
  });
});

