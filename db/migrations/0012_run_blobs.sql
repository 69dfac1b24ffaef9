-- SPDX-License-Identifier: Apache-2.0
-- 0012: a run's launch descriptions are BLOB, as PostgreSQL's are BYTEA.
-- Since 0008 the store keeps them compressed (db/store_pack.c): bytes, not
-- text.  SQLite kept them as blobs in the TEXT columns of 0002 all the same
-- (a blob bound is stored as it is whatever the column's type), so no value
-- changes; the declared type now says what they are, and the schema is the
-- one PostgreSQL has (tests/pg/schema-compare.py).  SQLite changes a
-- column's type by making the table again; nothing refers to run.
CREATE TABLE run_new (
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
    metampich     BLOB NOT NULL,
    rsl           BLOB NOT NULL,
    batch         TEXT,
    instance      TEXT
);
INSERT INTO run_new (agreement, style, state, started, ended, exit_status, signal, pid,
                     pid_start, directory, command, reason, output, output_total, metampich,
                     rsl, batch, instance)
    SELECT agreement, style, state, started, ended, exit_status, signal, pid, pid_start,
           directory, command, reason, output, output_total, metampich, rsl, batch, instance
    FROM run;
DROP TABLE run;
ALTER TABLE run_new RENAME TO run;
CREATE INDEX run_open ON run(state) WHERE state IN ('waiting', 'running');
