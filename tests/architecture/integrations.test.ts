import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repo, sourceFiles } from "./support";

/*
 * Integrations outside the lease core (issue 39 item 4): GitHub, Slack and webhook delivery
 * live under server/integrations/<name>/ and consume the events outbox and the core's generic
 * hooks; the core does not even name them. That it never imports them:
 * tests/architecture/layers.test.ts (core-never-imports-integrations).
 */

const CORE = ["server/operations", "server/domain", "server/sql", "server/queries", "server/realtime", "server/database"];
const INTEGRATION_NAMES = /github|slack/i;

describe("the lease core", () => {
  it("names no integration, not even in a comment", async () => {
    const files = (await Promise.all(CORE.map(sourceFiles))).flat();
    // The scan reads the core (a scanner that finds nothing proves nothing).
    expect(files.length).toBeGreaterThan(40);
    const mentions: string[] = [];
    for (const file of files) {
      const lines = (await readFile(path.join(repo, file), "utf8")).split("\n");
      lines.forEach((line, index) => {
        if (INTEGRATION_NAMES.test(line)) mentions.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(mentions).toEqual([]);
  });

  it("while each integration lives in its own folder under server/integrations", async () => {
    for (const name of ["github", "slack", "webhooks"]) {
      expect((await sourceFiles(path.join("server", "integrations", name))).length, name).toBeGreaterThanOrEqual(3);
    }
  });
});
