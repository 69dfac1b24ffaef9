-- SPDX-License-Identifier: Apache-2.0
-- 0001: agreements, their allocation, the reservation journal, the
-- negotiation trace, and the simulators' calendars.
-- Times are seconds since the Unix epoch (UTC).
--
-- Agreement ids are random, so rows are stored by an increasing integer
-- (seq) and found by id through an index: inserts append to the end of each
-- table instead of dirtying a random page of every B-tree.

CREATE TABLE agreement (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    name        TEXT,
    initiator   TEXT NOT NULL,
    state       TEXT NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    start_time  INTEGER,
    end_time    INTEGER,
    earliest    INTEGER,
    deadline    INTEGER,
    duration    INTEGER NOT NULL,
    strategy    TEXT NOT NULL,
    launch      TEXT NOT NULL,
    rounds      INTEGER NOT NULL DEFAULT 0,
    rollbacks   INTEGER NOT NULL DEFAULT 0,
    fault_code  TEXT,
    reason      TEXT,
    terms       TEXT,
    guarantees  TEXT,
    idem_key    TEXT UNIQUE,
    offer       BLOB NOT NULL
);
CREATE INDEX agreement_state ON agreement(state);
CREATE INDEX agreement_initiator ON agreement(initiator);
CREATE INDEX agreement_created ON agreement(created);

-- Per component: where it runs and under which reservation.
CREATE TABLE allocation_component (
    agreement    INTEGER NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
    idx          INTEGER NOT NULL,
    name         TEXT NOT NULL,
    site         TEXT NOT NULL,
    nodes        INTEGER NOT NULL,
    ppn          INTEGER NOT NULL,
    reservation  TEXT,
    local_id     TEXT,
    node_names   TEXT,
    PRIMARY KEY (agreement, idx)
) WITHOUT ROWID;
CREATE INDEX allocation_component_site ON allocation_component(site, agreement);

-- Per link: the bandwidth and its reservation (none when both ends share a site).
CREATE TABLE allocation_link (
    agreement    INTEGER NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
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
    PRIMARY KEY (agreement, idx)
) WITHOUT ROWID;

-- The journal: every reservation is written here before it is requested and
-- its outcome after, so that a crash at any point can be rolled back.
CREATE TABLE reservation (
    key             TEXT NOT NULL UNIQUE,
    agreement_id    TEXT NOT NULL,
    round           INTEGER NOT NULL,
    adapter         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    resource        TEXT NOT NULL,
    amount          INTEGER NOT NULL,
    start_time      INTEGER NOT NULL,
    end_time        INTEGER NOT NULL,
    state           TEXT NOT NULL,
    local_id        TEXT,
    effective_start INTEGER,
    effective_end   INTEGER,
    error           TEXT,
    updated         INTEGER NOT NULL
);
CREATE INDEX reservation_agreement ON reservation(agreement_id);
CREATE INDEX reservation_open ON reservation(state)
    WHERE state IN ('intent', 'reserved', 'unknown', 'cancel-failed');

CREATE TABLE trace_event (
    agreement    INTEGER NOT NULL REFERENCES agreement(seq) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    round        INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    target       TEXT,
    adapter      TEXT,
    amount       INTEGER,
    t_from       INTEGER,
    t_until      INTEGER,
    t_result     INTEGER,
    status       TEXT NOT NULL,
    elapsed_us   INTEGER,
    detail       TEXT,
    PRIMARY KEY (agreement, seq)
) WITHOUT ROWID;

-- The simulated adapters' own calendars.
CREATE TABLE sim_booking (
    adapter    TEXT NOT NULL,
    key        TEXT NOT NULL,
    resource   TEXT NOT NULL,
    start_time INTEGER NOT NULL,
    end_time   INTEGER NOT NULL,
    amount     INTEGER NOT NULL,
    owner      TEXT NOT NULL,
    UNIQUE (adapter, key)
);

-- Days for which a simulator has generated its background load.
CREATE TABLE sim_load_day (
    adapter TEXT NOT NULL,
    day     INTEGER NOT NULL,
    PRIMARY KEY (adapter, day)
) WITHOUT ROWID;
