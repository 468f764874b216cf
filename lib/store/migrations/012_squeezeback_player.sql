-- The squeezeback player flow (issue 14): a brand's player-token key (HS256 secret; write-only
-- through PUT /api/v1/brand-tokens/{brand}) beside its MRSS push token, either of which may be set
-- alone; and, for sources without EXT-X-PROGRAM-DATE-TIME, the media sequence number of a break's
-- first segment (break segments are then located by sequence and accumulated durations).
alter table brand_token alter column token_hash drop not null;
alter table brand_token add column jwt_key text;
alter table squeeze_break add column start_seq bigint;
