-- SPDX-License-Identifier: Apache-2.0
-- 0007: retention ([database] retain, db/store_prune.c).  Housekeeping
-- finds the agreements and quotes that ended longest ago, and the quote an
-- agreement was committed from, by these indexes instead of a scan.
CREATE INDEX agreement_state_updated ON agreement(state, updated);
CREATE INDEX quote_ended ON quote(updated) WHERE state NOT IN ('Advisory', 'Held');
CREATE INDEX quote_agreement ON quote(agreement) WHERE agreement IS NOT NULL;
