-- SPDX-License-Identifier: Apache-2.0
-- 0004: the simulators keep their calendars in databases of their own
-- (adapters/sim/sim_store.c), no longer in accordd's.  Calendars stored
-- here by an older accordd are not carried over: a simulated site starts
-- with an empty calendar (and its background load made again).
DROP TABLE sim_booking;
DROP TABLE sim_load_day;
