-- SPDX-License-Identifier: Apache-2.0
-- 0002: the local account a booking is for ([daemon] mapfile maps the
-- peer's user to it; its jobs run as it).  '': none (no mapfile, and every
-- row written before): the reservation names no user and its jobs run as
-- job_user, as before.
ALTER TABLE site_bookings ADD COLUMN account TEXT NOT NULL DEFAULT '';
