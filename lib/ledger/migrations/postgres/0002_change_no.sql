-- SPDX-License-Identifier: Apache-2.0
-- Change numbers: every write of a booking (made, changed, cancelled) takes
-- the next number of booking_change while it holds its resource's lock, so
-- that a resource's numbers commit in the order they were taken.  A process
-- keeps per resource the highest number it has applied and reads only the
-- rows above it.  A cancel removes its booking and leaves a tombstone in
-- booking_gone with a number of its own, so that the others see it go;
-- booking keeps only what is booked.  Rows and tombstones long ended are
-- pruned, also under their resource's lock.  The rows there already are
-- numbered here.  CACHE 1 (the default, said because it matters): a session
-- caching numbers would hand them out of the order in which they are taken.
CREATE SEQUENCE booking_change CACHE 1;
ALTER TABLE booking ADD COLUMN change_no BIGINT NOT NULL DEFAULT 0;
UPDATE booking SET change_no = nextval('booking_change');
CREATE INDEX booking_change_no ON booking(resource, change_no);
CREATE TABLE booking_gone (
    key        TEXT NOT NULL,
    resource   TEXT NOT NULL,
    end_time   BIGINT NOT NULL,
    change_no  BIGINT NOT NULL
);
CREATE INDEX booking_gone_change_no ON booking_gone(resource, change_no);
