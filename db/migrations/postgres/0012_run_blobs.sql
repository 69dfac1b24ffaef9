-- SPDX-License-Identifier: Apache-2.0
-- 0012 for PostgreSQL: nothing to do; ../0012_run_blobs.sql gives SQLite's
-- run the BLOB launch descriptions that 0002 gave PostgreSQL as BYTEA.
SELECT 1;
