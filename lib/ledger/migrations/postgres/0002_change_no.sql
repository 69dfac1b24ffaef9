-- Change numbers: every write of a booking (made, changed, cancelled) takes
-- the next number of booking_change while it holds its resource's lock, so
-- that a resource's numbers commit in the order they were taken.  A process
-- keeps per resource the highest number it has applied and reads only the
-- rows above it.  A cancel marks its row (cancelled) rather than removing
-- it, so that the others see it go; rows long ended are pruned, also under
-- their resource's lock.  The rows there already are numbered here.  CACHE 1
-- (the default, said here because it matters): a session caching numbers
-- would hand out numbers out of the order in which they are taken.
CREATE SEQUENCE booking_change CACHE 1;
ALTER TABLE booking ADD COLUMN change_no BIGINT NOT NULL DEFAULT 0,
                    ADD COLUMN cancelled BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE booking SET change_no = nextval('booking_change');
CREATE INDEX booking_change_no ON booking(resource, change_no);
