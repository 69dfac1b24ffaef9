-- SPDX-License-Identifier: Apache-2.0
-- 0013: whom an agreement is for, as the sites must know it (issue 33):
-- the user, a token's issuer and subject or a certificate's subject DN,
-- and groups, one "name:value" a line (db/store_identity.c), handed to
-- every adapter call that books or starts something for the agreement
-- after it was negotiated (a change, the launch at its start).  Never the
-- user's token.  NULL: no one known (no [auth], and every row written
-- before).  The same text serves PostgreSQL.
ALTER TABLE agreement ADD COLUMN identity TEXT;
