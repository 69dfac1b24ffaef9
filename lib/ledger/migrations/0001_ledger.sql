-- SPDX-License-Identifier: Apache-2.0
-- A booking ledger's calendar file: its bookings by key, and the days whose
-- background load a simulated site made (so that a restart does not make
-- them again).
CREATE TABLE booking (
    key        TEXT PRIMARY KEY,
    resource   TEXT NOT NULL,
    start_time INTEGER NOT NULL,
    end_time   INTEGER NOT NULL,
    amount     INTEGER NOT NULL,
    owner      TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE load_day (day INTEGER PRIMARY KEY);
