-- SPDX-License-Identifier: Apache-2.0
-- The tc adapter's state: one row per provisioned reservation with its
-- endpoints (space-separated IPv4 addresses of each side), its leaf class
-- id, when it was first in place, its first violation and the last counters
-- of its classes.  IF NOT EXISTS: files made before the adapter had
-- numbered migrations hold this table at schema version 0.
CREATE TABLE IF NOT EXISTS provision (
    key TEXT PRIMARY KEY,
    local_id TEXT NOT NULL,
    link TEXT NOT NULL,
    start_time INTEGER NOT NULL,
    end_time INTEGER NOT NULL,
    amount INTEGER NOT NULL,
    class_id INTEGER NOT NULL UNIQUE,
    addrs_a TEXT NOT NULL,
    addrs_b TEXT NOT NULL,
    activated INTEGER NOT NULL,
    violated_at INTEGER NOT NULL,
    why TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    packets INTEGER NOT NULL,
    drops INTEGER NOT NULL
) WITHOUT ROWID;
