"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useTRPC } from "./trpc";
import { ApiError } from "./ui";

/**
 * Revoke a live lease (leases.revoke): a button that opens a small form asking for the reason,
 * which the worker gets back when its next call is fenced.
 */
export function RevokeLease({ lease }: { lease: { id: string; epoch: number; workerId: string; workItemId: string } }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const reasonId = useId();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const mutation = useMutation(trpc.leases.revoke.mutationOptions({
    onSuccess: () => {
      setOpen(false);
      setReason("");
      return queryClient.invalidateQueries();
    },
  }));
  if (!open) {
    return (
      <button type="button" className="button-small button-danger" onClick={() => setOpen(true)} aria-label={`Revoke ${lease.workerId}'s lease on ${lease.workItemId}`}>
        Revoke…
      </button>
    );
  }
  return (
    <form
      className="revoke-form"
      data-testid="revoke-form"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        mutation.mutate({ leaseId: lease.id, epoch: lease.epoch, reason });
      }}
    >
      <label htmlFor={reasonId}>Why revoke {lease.workerId}&apos;s lease? (the worker is told)</label>
      <textarea id={reasonId} rows={2} value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
      <div className="row">
        <button type="submit" className="button-danger button-small" disabled={mutation.isPending || !reason.trim()}>
          Revoke lease
        </button>
        <button type="button" className="button-quiet button-small" onClick={() => setOpen(false)}>
          Keep it
        </button>
      </div>
      <ApiError error={mutation.error} />
    </form>
  );
}
