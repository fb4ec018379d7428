import { agentClient, apiClient, operatorTokenOnce, run } from "./support";

/**
 * A small, realistic graph made through the API by agents and an operator, so every page
 * has something to show: a decomposed parent with chained children, live leases (one about
 * to expire), an open blocking question with options, a non-blocking one, a resolved one,
 * notes, a released item and plain ready items.
 */
export async function seedShowcase() {
  const operator = apiClient(await operatorTokenOnce());
  const id = (name: string) => `${name}-${run}`;
  const [ada, bob, cy, dee] = await Promise.all([
    agentClient(`ada-${run}`),
    agentClient(`bob-${run}`),
    agentClient(`cy-${run}`),
    agentClient(`dee-${run}`),
  ]);

  // A parent decomposed into a chain of children; ada works on the first child.
  await operator.workItems.create.mutate({
    id: id("importer"),
    title: "Launch the CSV importer",
    description: "Customers upload CSV files; we validate them and load them into the warehouse.",
    priority: 5,
  });
  const parentLease = await ada.leases.claim.mutate({ workItemId: id("importer"), durationSeconds: 600 });
  const decomposed = await ada.leases.decompose.mutate({
    leaseId: parentLease!.lease.id,
    epoch: parentLease!.lease.epoch,
    children: [
      { id: id("schema"), title: "Write the schema migration" },
      { id: id("backfill"), title: "Backfill existing uploads", dependsOn: [id("schema")] },
      { id: id("verify"), title: "Verify row counts", dependsOn: [id("backfill")] },
    ],
    claimChildId: id("schema"),
    durationSeconds: 900,
  });
  const schemaLease = decomposed.childLease!;
  await ada.leases.note.mutate({ leaseId: schemaLease.id, epoch: schemaLease.epoch, content: "Migration drafted; testing on a copy of production." });
  await ada.attention.request.mutate({
    leaseId: schemaLease.id,
    epoch: schemaLease.epoch,
    kind: "review",
    question: "Should the migration also add an index on uploaded_at?",
    context: "Queries filter by upload date; the index costs ~2 GB.",
    blocking: false,
  });

  // Plain ready items.
  await operator.workItems.create.mutate({ id: id("keys"), title: "Rotate the API keys", priority: 3 });
  await operator.workItems.create.mutate({ id: id("docs"), title: "Update the onboarding docs", description: "The screenshots are out of date." });

  // bob holds a lease that is about to expire (renewed once).
  await operator.workItems.create.mutate({ id: id("flaky"), title: "Fix the flaky upload test", priority: 2 });
  const flaky = await bob.leases.claim.mutate({ workItemId: id("flaky"), durationSeconds: 30 });
  await bob.leases.renew.mutate({ leaseId: flaky!.lease.id, epoch: flaky!.lease.epoch, durationSeconds: 45 });

  // cy is blocked on a human decision.
  await operator.workItems.create.mutate({ id: id("vendor"), title: "Choose an e-mail vendor", priority: 4 });
  const vendor = await cy.leases.claim.mutate({ workItemId: id("vendor"), durationSeconds: 300 });
  await cy.attention.request.mutate({
    leaseId: vendor!.lease.id,
    epoch: vendor!.lease.epoch,
    kind: "decision",
    question: "Which e-mail vendor should we sign with?",
    context: "Both meet the volume; Postmark is cheaper, SES is already in our AWS account.",
    options: ["Postmark", "Amazon SES", "Keep the current vendor"],
  });

  // dee finished one item, and had one question answered.
  await operator.workItems.create.mutate({ id: id("logs"), title: "Tidy the log format" });
  const logs = await dee.leases.claim.mutate({ workItemId: id("logs"), durationSeconds: 300 });
  await dee.leases.release.mutate({ leaseId: logs!.lease.id, epoch: logs!.lease.epoch, evidence: "Merged the log format change." });
  await operator.workItems.create.mutate({ id: id("retention"), title: "Set the log retention period" });
  const retention = await dee.leases.claim.mutate({ workItemId: id("retention"), durationSeconds: 300 });
  const asked = await dee.attention.request.mutate({
    leaseId: retention!.lease.id,
    epoch: retention!.lease.epoch,
    kind: "scope",
    question: "How long must logs be kept?",
    options: ["30 days", "90 days"],
  });
  await operator.attention.resolve.mutate({ id: asked.request.id, resolution: "90 days" });

  return { ids: { parent: id("importer"), schema: id("schema"), backfill: id("backfill"), vendor: id("vendor"), flaky: id("flaky") } };
}
