-- SPDX-License-Identifier: Apache-2.0
-- 0002: launching meta-jobs.  Each component keeps its program, and each
-- committed agreement gets a run: its two launch descriptions (MetaMPICH and
-- MPICH-G2) and what became of the job started at the agreed time.

-- Arguments are stored as one blob of NUL-terminated strings (XML text
-- cannot contain NUL).
ALTER TABLE allocation_component ADD COLUMN executable TEXT;
ALTER TABLE allocation_component ADD COLUMN args BLOB;

CREATE TABLE run (
    agreement     INTEGER PRIMARY KEY REFERENCES agreement(seq) ON DELETE CASCADE,
    style         TEXT NOT NULL,
    state         TEXT NOT NULL,
    started       INTEGER,
    ended         INTEGER,
    exit_status   INTEGER,
    signal        INTEGER,
    pid           INTEGER,
    pid_start     INTEGER,
    directory     TEXT,
    command       TEXT,
    reason        TEXT,
    output        BLOB,
    output_total  INTEGER,
    metampich     TEXT NOT NULL,
    rsl           TEXT NOT NULL
);
-- The runs the launcher still has to start or watch.
CREATE INDEX run_open ON run(state) WHERE state IN ('waiting', 'running');
