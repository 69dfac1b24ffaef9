-- 0009: fewer pages written and stored per agreement.
--
-- agreement_state (state) is the prefix of agreement_state_updated (state,
-- updated) of 0007, which serves every query by state the same way; keeping
-- both cost every new or settled agreement two more index pages in each of
-- its commits.
DROP INDEX IF EXISTS agreement_state;

-- From this version on the store keeps long texts compressed (an
-- agreement's offer, a run's launch descriptions: db/store_pack.c): such a
-- value is a blob that begins with a NUL and 'z'.  Values written before
-- stay as they are and read the same.  No statement: the version itself
-- keeps an older accordd, which would not read them, from opening the file.
