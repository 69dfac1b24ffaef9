-- SPDX-License-Identifier: Apache-2.0
-- 0010 for PostgreSQL: ../0010_instances.sql in PostgreSQL's types.

CREATE TABLE instance (
    id      TEXT PRIMARY KEY,
    host    TEXT NOT NULL,
    pid     BIGINT NOT NULL,
    started BIGINT NOT NULL,
    seen    BIGINT NOT NULL
);
CREATE TABLE lease (
    name    TEXT PRIMARY KEY,
    holder  TEXT NOT NULL,
    expires BIGINT NOT NULL
);
ALTER TABLE agreement ADD COLUMN instance TEXT;
ALTER TABLE quote ADD COLUMN instance TEXT;
-- A run's timer, or its job's watch, is held by one instance (NULL: none
-- yet); the leader takes over the runs of dead ones.
ALTER TABLE run ADD COLUMN instance TEXT;
