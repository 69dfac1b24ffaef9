-- SPDX-License-Identifier: Apache-2.0
-- 0006 for PostgreSQL: ../0006_versions.sql in PostgreSQL's types.

ALTER TABLE agreement ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE agreement ADD COLUMN modifying BIGINT NOT NULL DEFAULT 0;
-- What the modification that made the current version changed, in words
-- (NULL for version 1).
ALTER TABLE agreement ADD COLUMN change TEXT;
ALTER TABLE trace_event ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

-- One row per version that was replaced: what it was, and `change`, what
-- the modification that made it changed (NULL for version 1).
CREATE TABLE agreement_version (
    agreement   BIGINT NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
    version     BIGINT NOT NULL,
    created     BIGINT NOT NULL,
    replaced    BIGINT NOT NULL,
    start_time  BIGINT,
    end_time    BIGINT,
    rounds      BIGINT NOT NULL DEFAULT 0,
    rollbacks   BIGINT NOT NULL DEFAULT 0,
    change      TEXT,
    PRIMARY KEY (agreement, version)
);

-- The allocation of a replaced version, as allocation_component and
-- allocation_link held it.
CREATE TABLE version_component (
    agreement    BIGINT NOT NULL,
    version      BIGINT NOT NULL,
    idx          BIGINT NOT NULL,
    name         TEXT NOT NULL,
    site         TEXT NOT NULL,
    nodes        BIGINT NOT NULL,
    ppn          BIGINT NOT NULL,
    reservation  TEXT,
    local_id     TEXT,
    node_names   TEXT,
    executable   TEXT,
    args         BYTEA,
    PRIMARY KEY (agreement, version, idx),
    FOREIGN KEY (agreement, version) REFERENCES agreement_version(agreement, version)
        ON DELETE CASCADE
);

CREATE TABLE version_link (
    agreement    BIGINT NOT NULL,
    version      BIGINT NOT NULL,
    idx          BIGINT NOT NULL,
    name         TEXT NOT NULL,
    from_comp    TEXT NOT NULL,
    to_comp      TEXT NOT NULL,
    site_a       TEXT NOT NULL,
    site_b       TEXT NOT NULL,
    link         TEXT,
    bandwidth    BIGINT NOT NULL,
    reservation  TEXT,
    local_id     TEXT,
    PRIMARY KEY (agreement, version, idx),
    FOREIGN KEY (agreement, version) REFERENCES agreement_version(agreement, version)
        ON DELETE CASCADE
);
