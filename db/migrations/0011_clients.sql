-- 0011: the client an agreement or quote came from, and what a user holds.
--
-- client is the IP address of the client that offered it (NULL: unknown,
-- and every row written before).  It is kept, never shown: without [auth]
-- the quotas count open agreements and quotes by it ([quota]
-- max_agreements_per_address, max_quotes_per_address), the node-hours and
-- Mbit-hours one address holds, and the Rejected agreements kept for it
-- ([database] max_rejected_per_user).  The same text serves PostgreSQL.
ALTER TABLE agreement ADD COLUMN client TEXT;
ALTER TABLE quote ADD COLUMN client TEXT;
-- A user's (or an address's) agreements by state, oldest change first: the
-- open ones counted, the oldest Rejected ones pruned.
CREATE INDEX agreement_initiator_state ON agreement(initiator, state, updated);
CREATE INDEX agreement_client_state ON agreement(client, state, updated);
-- agreement_initiator (initiator) of 0001 is the prefix of the first.
DROP INDEX IF EXISTS agreement_initiator;
CREATE INDEX quote_client ON quote(client) WHERE state IN ('Advisory', 'Held');
