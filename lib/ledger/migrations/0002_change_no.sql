-- SPDX-License-Identifier: Apache-2.0
-- Change numbers, for a calendar that several processes share (PostgreSQL,
-- migrations/postgres/0002): there every write numbers its booking, and a
-- cancel leaves a numbered tombstone, so that a process reads only what
-- changed since it last looked.  A file has one writer that never reads
-- back: here the numbers stay 0 and a cancel simply removes the row; the
-- column exists so that both dialects count the same migrations and read
-- their bookings alike.
ALTER TABLE booking ADD COLUMN change_no INTEGER NOT NULL DEFAULT 0;
