-- SPDX-License-Identifier: Apache-2.0
-- accord-site's journal: the bookings it made for its peers, by the key
-- Accord chose (intent before the adapter is asked, then reserved or
-- cancelled), and the jobs it started for them.
CREATE TABLE site_bookings (
    key TEXT PRIMARY KEY,
    peer TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('nodes', 'bandwidth')),
    resource TEXT NOT NULL,
    amount INTEGER NOT NULL,
    start INTEGER NOT NULL,                  -- as asked
    end INTEGER NOT NULL,                    -- as asked
    old_key TEXT NOT NULL DEFAULT '',
    local_id TEXT NOT NULL DEFAULT '',
    eff_start INTEGER NOT NULL DEFAULT 0,    -- as the adapter booked it
    eff_end INTEGER NOT NULL DEFAULT 0,
    eff_amount INTEGER NOT NULL DEFAULT 0,
    nodes TEXT,
    state TEXT NOT NULL CHECK (state IN ('intent', 'reserved', 'cancelled')),
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL);
CREATE INDEX site_bookings_peer ON site_bookings (peer, state, updated);
CREATE TABLE site_jobs (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    peer TEXT NOT NULL,
    host TEXT,
    local_job TEXT,
    state TEXT NOT NULL,
    exit_status INTEGER NOT NULL DEFAULT -1,
    signal INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL);
