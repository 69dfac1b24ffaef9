-- SPDX-License-Identifier: Apache-2.0
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
-- An address's agreements (its open ones counted, as agreement_initiator
-- of 0001 serves a user's); and a user's or an address's Rejected ones,
-- oldest first, to prune.  The Rejected ones only: an index that held every
-- agreement by state and time would be written at every change of state
-- (that cost a negotiation a quarter more CPU).
CREATE INDEX agreement_client ON agreement(client);
CREATE INDEX agreement_rejected_initiator ON agreement(initiator, updated)
    WHERE state = 'Rejected';
CREATE INDEX agreement_rejected_client ON agreement(client, updated) WHERE state = 'Rejected';
CREATE INDEX quote_client ON quote(client) WHERE state IN ('Advisory', 'Held');
