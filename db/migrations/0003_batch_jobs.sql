-- SPDX-License-Identifier: Apache-2.0
-- 0003: components that go into their reservation through the site's batch
-- system (sbatch) instead of mpiexec: one "COMPONENT SITE JOBID" line each.
ALTER TABLE run ADD COLUMN batch TEXT;
