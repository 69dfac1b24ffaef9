-- SPDX-License-Identifier: Apache-2.0
-- 0005 for PostgreSQL: ../0005_quotes.sql in PostgreSQL's types.

CREATE TABLE quote (
    id          TEXT PRIMARY KEY,
    initiator   TEXT NOT NULL,
    state       TEXT NOT NULL,
    created     BIGINT NOT NULL,
    updated     BIGINT NOT NULL,
    hold_until  BIGINT,
    held_option BIGINT,
    agreement   TEXT,
    reason      TEXT,
    duration    BIGINT NOT NULL,
    options     TEXT NOT NULL,
    allocation  TEXT NOT NULL,
    offer       BYTEA NOT NULL
);
CREATE INDEX quote_open ON quote(state, hold_until) WHERE state IN ('Advisory', 'Held');
CREATE INDEX quote_initiator ON quote(initiator) WHERE state IN ('Advisory', 'Held');
