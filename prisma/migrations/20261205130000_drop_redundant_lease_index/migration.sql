-- Issue 31 (write less per cycle): every claim inserts a lease row into each index of leases.
-- leases_worker_id_idx (worker_id) is a prefix of leases_worker_id_acquired_at_idx and
-- leases_worker_id_ended_at_idx, which answer every lookup by worker it served.
DROP INDEX "leases_worker_id_idx";
