-- SPDX-License-Identifier: Apache-2.0
-- 0008: fewer pages written and stored per agreement.
--
-- agreement_state (state) is the prefix of agreement_state_updated (state,
-- updated) of 0007, which serves every query by state the same way; keeping
-- both cost every new or settled agreement two more index pages in each of
-- its commits.
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
    agreement INTEGER NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
    version   INTEGER NOT NULL,
    events    BLOB NOT NULL,
    PRIMARY KEY (agreement, version)
) WITHOUT ROWID;
