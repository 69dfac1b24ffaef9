-- 0009: the signature of each agreement's current document, kept.
--
-- accordd signs an agreement's document when it is issued and after each
-- change of what it shows (lib/dsig).  Keeping the signature (about 330
-- bytes with a 2048-bit key: whose key, the SHA-256 of the document's bytes,
-- its DigestValue and SignatureValue) lets a GET of any agreement, after a
-- restart too, send the document without signing it again: a signature
-- costs about 20 times a GET otherwise.  NULL: none kept yet (agreements
-- from before, and the first GET after a change keeps one).
ALTER TABLE agreement ADD COLUMN signature BLOB;
