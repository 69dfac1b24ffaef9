-- SPDX-License-Identifier: Apache-2.0
-- 0010: several accordd on one database (PostgreSQL; with SQLite there is
-- one, and these tables stay as good as empty).
--
-- Each running accordd has a row it renews every few seconds (seen); one
-- whose row was not renewed for the lease time is dead.  A lease is a duty
-- that must run once (name 'leader': housekeeping, hold expiry, provisioning
-- retries, launches, recovery of dead instances' negotiations): held by one
-- instance until `expires`, renewed by it, taken over once expired.  An
-- agreement or quote being negotiated names the instance that runs it, so
-- that the leader ends only a dead instance's (a terminate that reaches
-- another instance leaves it PendingAndTerminating: the instance running it
-- polls for that).
CREATE TABLE instance (
    id      TEXT PRIMARY KEY,
    host    TEXT NOT NULL,
    pid     INTEGER NOT NULL,
    started INTEGER NOT NULL,
    seen    INTEGER NOT NULL
);
CREATE TABLE lease (
    name    TEXT PRIMARY KEY,
    holder  TEXT NOT NULL,
    expires INTEGER NOT NULL
);
ALTER TABLE agreement ADD COLUMN instance TEXT;
ALTER TABLE quote ADD COLUMN instance TEXT;
-- A run's timer, or its job's watch, is held by one instance (NULL: none
-- yet); the leader takes over the runs of dead ones.
ALTER TABLE run ADD COLUMN instance TEXT;
