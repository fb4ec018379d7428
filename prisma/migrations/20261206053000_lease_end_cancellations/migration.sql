-- The core's "cancel when its lease ends" request (rule 5: a lease is never pre-empted): an
-- integration asks for it, every path that ends a lease other than by a release honours it
-- (server/operations/lease-end-cancellation.ts). GitHub's pending closes become such requests,
-- with the reason their cancellation has always recorded.
ALTER TABLE "github_closes" RENAME TO "lease_end_cancellations";
ALTER TABLE "lease_end_cancellations" RENAME CONSTRAINT "github_closes_pkey" TO "lease_end_cancellations_pkey";
ALTER TABLE "lease_end_cancellations" RENAME CONSTRAINT "github_closes_work_item_id_fkey" TO "lease_end_cancellations_work_item_id_fkey";
ALTER TABLE "lease_end_cancellations" RENAME COLUMN "closed_by" TO "requested_by";
ALTER TABLE "lease_end_cancellations" ADD COLUMN "reason" TEXT;
UPDATE "lease_end_cancellations"
   SET "reason" = 'its GitHub issue was closed while it was leased; cancelled when that lease ended without a release';
ALTER TABLE "lease_end_cancellations" ALTER COLUMN "reason" SET NOT NULL;
