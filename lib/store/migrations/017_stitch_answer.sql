-- Issue 24 item 4 (rest): a stitched session stores its plan only; the POST answer is held in the
-- memory of the instance that stitched it. Sessions stored before keep theirs until they expire.
alter table stitch_session alter column response drop not null;
