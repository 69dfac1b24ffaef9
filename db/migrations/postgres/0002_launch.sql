-- SPDX-License-Identifier: Apache-2.0
-- 0002 for PostgreSQL: ../0002_launch.sql in PostgreSQL's types; the launch
-- descriptions are BYTEA, since the store keeps them compressed (0008).

ALTER TABLE allocation_component ADD COLUMN executable TEXT;
ALTER TABLE allocation_component ADD COLUMN args BYTEA;

CREATE TABLE run (
    agreement     BIGINT PRIMARY KEY REFERENCES agreement(seq) ON DELETE CASCADE,
    style         TEXT NOT NULL,
    state         TEXT NOT NULL,
    started       BIGINT,
    ended         BIGINT,
    exit_status   BIGINT,
    signal        BIGINT,
    pid           BIGINT,
    pid_start     BIGINT,
    directory     TEXT,
    command       TEXT,
    reason        TEXT,
    output        BYTEA,
    output_total  BIGINT,
    metampich     BYTEA NOT NULL,
    rsl           BYTEA NOT NULL
);
-- The runs the launcher still has to start or watch.
CREATE INDEX run_open ON run(state) WHERE state IN ('waiting', 'running');
