-- 0009: fewer pages written per agreement.  agreement_state (state) is the
-- prefix of agreement_state_updated (state, updated) of 0007, which serves
-- every query by state the same way; keeping both cost every new or
-- settled agreement two more index pages in each of its commits.
DROP INDEX IF EXISTS agreement_state;
