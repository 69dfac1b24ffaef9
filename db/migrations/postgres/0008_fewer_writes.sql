-- SPDX-License-Identifier: Apache-2.0
-- 0008 for PostgreSQL: ../0008_fewer_writes.sql in PostgreSQL's types (the
-- server compresses long values itself, TOAST; the store's packing is kept
-- so that both backends hold the same values).

DROP INDEX IF EXISTS agreement_state;

-- From this version on the store keeps long texts compressed (an
-- agreement's offer, a run's launch descriptions: db/store_pack.c): such a
-- value is a blob that begins with a NUL and 'z'.  Values written before
-- stay as they are and read the same; an older accordd, which would not
-- read them, refuses the file by its version.

-- The trace of one version of an agreement in one row, encoded and
-- compressed (db/store_trace.c) instead of a row per event: written once
-- when the negotiation settles, read in one step.  Events stored before
-- stay in trace_event and are read first.
CREATE TABLE trace_pack (
    agreement BIGINT NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
    version   BIGINT NOT NULL,
    events    BYTEA NOT NULL,
    PRIMARY KEY (agreement, version)
);
