-- Change numbers, for a calendar that several processes share (PostgreSQL,
-- migrations/postgres/0002): there every write numbers its booking and a
-- cancel marks the row instead of removing it, so that a process reads only
-- what changed since it last looked.  A file has one writer that never
-- reads back: here the columns stay 0 and a cancel still removes the row;
-- they exist so that both dialects count the same migrations.
ALTER TABLE booking ADD COLUMN change_no INTEGER NOT NULL DEFAULT 0;
ALTER TABLE booking ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
