-- The squeezeback player flow (issue 14): a brand's player-token key (HS256 secret; write-only
-- through PUT /api/v1/brand-tokens/{brand}) beside its MRSS push token, either of which may be set
-- alone.
alter table brand_token alter column token_hash drop not null;
alter table brand_token add column jwt_key text;
