/**
 * The agent workflow, written once: `work-graph prime` prints it with CLI commands, and the MCP
 * server sends it as its instructions with tool calls. Only the way each step is invoked differs.
 */
export type Surface = "cli" | "mcp";

interface Invocations {
  intro: string;
  fenced: string;
  queue: string;
  claim: string;
  nothingReady: string;
  note: string;
  renew: string;
  release: string;
  ask: string;
  askAnswered: string;
  decompose: string;
  cancel: string;
  handBack: string;
  extraRules: string[];
}

const INVOCATIONS: Record<Surface, Invocations> = {
  cli: {
    intro: "you are an agent; WORK_GRAPH_URL and WORK_GRAPH_TOKEN are set",
    fenced: "exit code 5",
    queue: "work-graph queue",
    claim: "work-graph claim [<item>] [--duration <seconds>] [--wait <seconds>]",
    nothingReady: "Exit 6: nothing ready; --wait <seconds> waits that long for an item instead.",
    note: 'work-graph note <item> "<progress>"',
    renew: [
      "4. work-graph renew <item>",
      "     keep the lease alive: renew at about a third of its duration (every ~5 min for 900 s),",
      "     ALWAYS before it runs out. A lapsed lease cannot be renewed.",
    ].join("\n"),
    release: 'work-graph release <item> --evidence "<what was done and how it was verified>" [--link <url>]...',
    ask: [
      "work-graph attention request <item> --kind <decision|authority|access|review|help|scope> \\",
      '       --question "<what you need from a human>" [--option <choice>]... [--context "<details>"]',
    ].join("\n"),
    askAnswered: [
      "Once answered it is ready again; 'claim' shows the answer.",
      "       'work-graph attention wait <request id>' blocks until a human answers and prints it.",
      "       (--non-blocking: keep working; the question is only recorded)",
    ].join("\n"),
    decompose: `work-graph decompose <item> --children-json '[{"id":"x","title":"..."},{"title":"...","dependsOn":["x"]}]'`,
    cancel: 'work-graph cancel <item> --reason "<why it should not be done>"',
    handBack: 'work-graph hand-back <item> --reason "<why you cannot do it>" [--retry-after <seconds>]',
    extraRules: [
      "- WORK_GRAPH_PROJECT (or --project) picks the project you claim from, list and create in;",
      "  --capability narrows a claim to some of your token's capabilities.",
      "- Exit code 5 (LEASE_NOT_CURRENT) = your lease is gone: stop working on that item at once,",
      "  write nothing more about it, and claim again (it may be someone else's now).",
      "- The CLI remembers your lease per item: never pass lease ids or epochs by hand.",
      "- Add --json to any command for machine-readable output.",
      "- Exit codes: 0 ok, 2 bad input, 3 auth, 4 not found, 5 fenced: stop, 6 nothing to claim,",
      "  7 conflict, 8 server unreachable: retry later, 9 drained: finish what you hold, claim nothing new,",
      "  10 attention wait timed out.",
    ],
  },
  mcp: {
    intro: "you are an agent connected through MCP",
    fenced: "a tool error starting with LEASE_NOT_CURRENT",
    queue: "queue {}",
    claim: "claim { workItemId?, projectId? }",
    nothingReady: "No item: nothing is ready; retry later or pass waitSeconds to wait for one.",
    note: 'note { workItemId, content: "<progress>" }',
    renew: [
      "4. (no step) This session renews your lease in the background for as long as it runs.",
      "     When the session ends, its leases are handed back at once (hand_back).",
    ].join("\n"),
    release: 'release { workItemId, evidence: "<what was done and how it was verified>", links? }',
    ask: 'ask { workItemId, question: "<what you need from a human>", kind?, options?, context?, waitSeconds? }',
    askAnswered: [
      "With waitSeconds (up to 3600) the tool waits for the answer and, once answered, claims the",
      "       item again for you and returns the answer with your new lease: continue from there.",
      "       (blocking: false: keep working; the question is only recorded)",
    ].join("\n"),
    decompose: 'decompose { workItemId, children: [{ id?, title, description?, dependsOn? }], claimChildId? }',
    cancel: 'cancel { workItemId, reason: "<why it should not be done>" }',
    handBack: 'hand_back { workItemId, reason: "<why you cannot do it>", retryAfterSeconds? }',
    extraRules: [
      "- LEASE_NOT_CURRENT = your lease is gone (expired, taken over, revoked, ended): stop working on",
      "  that item at once, write nothing more about it, and claim again (it may be someone else's now).",
      "- Tools act only with leases this session claimed; you never handle lease ids or epochs.",
      "- show { workItemId } gives an item's notes and the answers to its questions.",
      "- create { title, ... } adds new work you discover instead of doing it unasked.",
      "- WORK_GRAPH_PROJECT in this server's configuration is the default project of queue, claim and create.",
    ],
  },
};

/** The workflow text for one surface. */
export function workflow(surface: Surface): string {
  const s = INVOCATIONS[surface];
  return `Work Graph - how to work an item (${s.intro})

You hold an item through a LEASE that expires. Every write is checked against it. If it
expires or someone else takes the item over, your writes are refused (${s.fenced}): stop.

1. ${s.queue}
     ready items, in the order your next claim takes them
2. ${s.claim}
     take the next ready item (or the named one). Shows the item, your lease and the human's
     answers to questions asked on it earlier. ${s.nothingReady}
3. ${s.note}
     record what you did and found, as you go
${s.renew}
5. Finish with exactly one of:
   ${s.release}
   ${s.ask}
       Blocking by default: your lease ends and the item waits for an operator. Do not keep
       working on it. ${s.askAnswered}
   ${s.decompose}
       split it into child items (your lease ends; the parent waits for its children)
   ${s.cancel}
       it should not be done at all (duplicate, obsolete, wrong): it is closed for good
   ${s.handBack}
       you cannot do it, but someone else could: it goes back to the queue at once for
       another worker (or after the retry time), and your lease ends

Hand back, ask or cancel?
- Hand back when the obstacle is yours, not the item's: a tool, access or capability this
  worker lacks, a rate limit or outage (give the retry time), or you must stop now. Nobody
  needs to decide anything; another worker (or you, later) can do it as it is.
- Ask when a person must decide, grant or provide something (a choice, an approval, access
  that only a person can give, a review): the item waits for the answer.
- Cancel when it should not be done; release when it is done. Never just stop: an item you
  drop is stuck until its lease expires, and items that expire again and again go to a person.
- Claims only take items whose required capabilities you have (your token's), in order.

Rules
${s.extraRules.join("\n")}
`;
}
