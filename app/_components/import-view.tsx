"use client";

import { useMutation } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import Link from "next/link";
import { useState, type ChangeEvent } from "react";
import { parsePlan, planTree, PlanFileError, type Plan } from "@/packages/agent/src/plans/parse";
import { itemHref } from "@work-graph/contract";
import { useProjectId } from "./project";
import { describeError, useTRPC } from "./trpc";
import { Section } from "./ui";

/*
 * The Import page (docs/api.md "Import"): paste or upload a plan (the CLI's parsers:
 * packages/agent/src/plans), check it with a dry run, whose tree shows what would be created
 * and marks a refused item where it is, then import it.
 */

const FORMATS = [
  { value: "json", label: "JSON or task-master tasks.json", name: "plan.json" },
  { value: "yaml", label: "YAML", name: "plan.yaml" },
  { value: "md", label: "Markdown list", name: "plan.md" },
] as const;
type Format = (typeof FORMATS)[number]["value"];

const formatOf = (fileName: string): Format => (/\.(md|markdown)$/i.test(fileName) ? "md" : /\.ya?ml$/i.test(fileName) ? "yaml" : "json");

interface Refusal { reason: string; message: string; ref: string | null }

function refusalOf(error: unknown): Refusal {
  const { reason, message } = describeError(error);
  const detail = error instanceof TRPCClientError ? (error.data as { detail?: { ref?: unknown } } | undefined)?.detail : undefined;
  return { reason, message, ref: typeof detail?.ref === "string" ? detail.ref : null };
}

export function ImportView() {
  const trpc = useTRPC();
  const projectId = useProjectId();
  const [text, setText] = useState("");
  const [fileName, setFileName] = useState<string | null>(null);
  const [format, setFormat] = useState<Format>("md");
  const [parseError, setParseError] = useState<string | null>(null);
  const [checked, setChecked] = useState<{ plan: Plan; text: string } | null>(null);
  const run = useMutation(trpc.workItems.import.mutationOptions());
  const name = fileName ?? FORMATS.find((candidate) => candidate.value === format)!.name;

  const submit = (dryRun: boolean) => {
    setParseError(null);
    let plan: Plan;
    try {
      plan = parsePlan(name, text);
    } catch (error) {
      setParseError(error instanceof PlanFileError ? error.message : String(error));
      return;
    }
    setChecked(dryRun ? { plan, text } : null);
    run.mutate({ projectId: projectId ?? plan.projectId, items: plan.items as never, dryRun });
  };
  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    setFileName(file.name);
    setFormat(formatOf(file.name));
    setText(await file.text());
    setChecked(null);
    run.reset();
  };

  const result = run.data;
  const refusal = run.error ? refusalOf(run.error) : null;
  const shown = (() => {
    try {
      return text.trim() ? parsePlan(name, text) : null;
    } catch {
      return null;
    }
  })();
  const tree = shown ? planTree(shown.items, result ?? { existing: [], refs: {} }) : [];
  const dryRunDone = result !== undefined && run.variables?.dryRun === true;
  const imported = result !== undefined && run.variables?.dryRun === false;
  const canImport = dryRunDone && checked?.text === text && !run.isPending;

  return (
    <>
    <div className="page-head">
      <h1>Import</h1>
    </div>
    <Section title="Import a plan" id="import-heading">
      <form className="action-form import-form" aria-label="Import a plan" onSubmit={(event) => { event.preventDefault(); submit(true); }}>
        <div className="row">
          <div className="field">
            <label htmlFor="import-file">Upload a file</label>
            <input id="import-file" type="file" accept=".json,.yaml,.yml,.md,.markdown,application/json,text/markdown,text/yaml" onChange={onFile} />
          </div>
          <div className="field">
            <label htmlFor="import-format">Format</label>
            <select id="import-format" value={format} onChange={(event) => { setFormat(event.target.value as Format); setFileName(null); }}>
              {FORMATS.map((candidate) => <option key={candidate.value} value={candidate.value}>{candidate.label}</option>)}
            </select>
          </div>
        </div>
        <div className="field">
          <label htmlFor="import-text">Or paste it{fileName ? ` (from ${fileName})` : ""}</label>
          <textarea id="import-text" rows={12} value={text} spellCheck={false} onChange={(event) => { setText(event.target.value); setChecked(null); }}
            placeholder={"- [ ] Prepare the release\n  1. Freeze the branch\n  2. Run the release tests"} />
        </div>
        <p className="hint">
          All or nothing, and safe to re-run: items found by their externalId (task-master ids, Markdown paths) are not created twice.
          {projectId ? <> Into project <bdi>{projectId}</bdi>.</> : null}
        </p>
        <div className="row">
          <button type="submit" className="button-primary" disabled={!text.trim() || run.isPending}>Check (dry run)</button>
          <button type="button" disabled={!canImport} onClick={() => submit(false)}>Import</button>
        </div>
        {parseError ? <p className="error" role="alert"><strong className="reason">Not a plan</strong> {parseError}</p> : null}
        {refusal ? (
          <p className="error" role="alert">
            <strong className="reason">{refusal.reason}</strong> {refusal.message}{refusal.ref ? " (marked below)" : ""}
          </p>
        ) : null}
      </form>
      {result ? (
        <p role="status" className="import-summary">
          {imported ? "Imported: created" : "Dry run: would create"} {result.created.length} item{result.created.length === 1 ? "" : "s"}
          {result.existing.length ? `; ${result.existing.length} existed already` : ""}.
        </p>
      ) : null}
      {tree.length > 0 ? (
        <ul className="import-tree" data-testid="import-tree" aria-label="The plan">
          {tree.map((line) => {
            const offending = refusal?.ref === line.ref;
            return (
              <li key={line.ref} data-ref={line.ref} data-offending={offending || undefined} style={{ paddingInlineStart: `${line.depth * 1.5}rem` }}
                className={offending ? "import-offending" : undefined}>
                {line.id ? (imported || line.existing ? <Link href={itemHref(line.id)}><code>{line.id}</code></Link> : <code>{line.id}</code>) : null}{" "}
                <bdi>{line.title}</bdi>
                {line.existing ? <span className="badge"> existing</span> : null}
                {offending ? <strong className="error"> ← {refusal!.reason}: {refusal!.message}</strong> : null}
              </li>
            );
          })}
        </ul>
      ) : null}
    </Section>
    </>
  );
}
