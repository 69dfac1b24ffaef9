-- SPDX-License-Identifier: Apache-2.0
-- Quotes (POST /negotiations): counter-offers to an offer that commit
-- nothing, or with a hold the chosen option booked and held.  The held
-- reservations are journal entries (table reservation) whose agreement_id
-- is the quote's id and whose state is 'held'; housekeeping releases them
-- when hold_until passes, after a restart too.  options and allocation are
-- the store's own lines (db/store_quote.c).
CREATE TABLE quote (
    id          TEXT PRIMARY KEY,
    initiator   TEXT NOT NULL,
    state       TEXT NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    hold_until  INTEGER,
    held_option INTEGER,
    agreement   TEXT,
    reason      TEXT,
    duration    INTEGER NOT NULL,
    options     TEXT NOT NULL,
    allocation  TEXT NOT NULL,
    offer       BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX quote_open ON quote(state, hold_until) WHERE state IN ('Advisory', 'Held');
CREATE INDEX quote_initiator ON quote(initiator) WHERE state IN ('Advisory', 'Held');
