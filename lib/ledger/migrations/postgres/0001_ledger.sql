-- SPDX-License-Identifier: Apache-2.0
-- The booking ledger's tables in PostgreSQL's types.  Each ledger keeps
-- them in a schema of its own (ledger_NAME) of the store's database, which
-- every accordd instance shares.
CREATE TABLE booking (
    key        TEXT PRIMARY KEY,
    resource   TEXT NOT NULL,
    start_time BIGINT NOT NULL,
    end_time   BIGINT NOT NULL,
    amount     BIGINT NOT NULL,
    owner      TEXT NOT NULL
);
CREATE INDEX booking_resource ON booking(resource, end_time);
CREATE TABLE load_day (day BIGINT PRIMARY KEY);
