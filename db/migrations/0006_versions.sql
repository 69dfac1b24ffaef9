-- SPDX-License-Identifier: Apache-2.0
-- 0006: versions of an agreement.  A committed agreement can be modified
-- (POST /agreements/{id}/modify); each successful modification makes a new
-- version.  The agreement row and its allocation always hold the current
-- version; every earlier one is kept here as it was (its times and its
-- allocation), and each trace event says which version's negotiation it
-- belongs to.  `modifying` is set while a modification negotiates, so a
-- second one is refused and the reservations it holds for the new version
-- are not taken for leftovers by housekeeping.  Independent of 0005.

ALTER TABLE agreement ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE agreement ADD COLUMN modifying INTEGER NOT NULL DEFAULT 0;
-- What the modification that made the current version changed, in words
-- (NULL for version 1).
ALTER TABLE agreement ADD COLUMN change TEXT;
ALTER TABLE trace_event ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- One row per version that was replaced: what it was, and `change`, what
-- the modification that made it changed (NULL for version 1).
CREATE TABLE agreement_version (
    agreement   INTEGER NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    created     INTEGER NOT NULL,
    replaced    INTEGER NOT NULL,
    start_time  INTEGER,
    end_time    INTEGER,
    rounds      INTEGER NOT NULL DEFAULT 0,
    rollbacks   INTEGER NOT NULL DEFAULT 0,
    change      TEXT,
    PRIMARY KEY (agreement, version)
) WITHOUT ROWID;

-- The allocation of a replaced version, as allocation_component and
-- allocation_link held it.
CREATE TABLE version_component (
    agreement    INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    idx          INTEGER NOT NULL,
    name         TEXT NOT NULL,
    site         TEXT NOT NULL,
    nodes        INTEGER NOT NULL,
    ppn          INTEGER NOT NULL,
    reservation  TEXT,
    local_id     TEXT,
    node_names   TEXT,
    executable   TEXT,
    args         BLOB,
    PRIMARY KEY (agreement, version, idx),
    FOREIGN KEY (agreement, version) REFERENCES agreement_version(agreement, version)
        ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE version_link (
    agreement    INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    idx          INTEGER NOT NULL,
    name         TEXT NOT NULL,
    from_comp    TEXT NOT NULL,
    to_comp      TEXT NOT NULL,
    site_a       TEXT NOT NULL,
    site_b       TEXT NOT NULL,
    link         TEXT,
    bandwidth    INTEGER NOT NULL,
    reservation  TEXT,
    local_id     TEXT,
    PRIMARY KEY (agreement, version, idx),
    FOREIGN KEY (agreement, version) REFERENCES agreement_version(agreement, version)
        ON DELETE CASCADE
) WITHOUT ROWID;
