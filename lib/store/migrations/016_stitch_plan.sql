-- Issue 24 item 4: a stitched session keeps its splice plan, not its rendered texts; the texts are
-- rendered again from the plan and the (shared, cached) content and ad manifests. Sessions stored
-- before keep their files until they expire.
alter table stitch_session alter column files drop not null;
alter table stitch_session add column plan jsonb;
