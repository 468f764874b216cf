-- Ad creative conditioning (issue 26): an ad whose VAST carries no streaming rendition for the
-- content is transcoded once per (creative, ladder profile) into HLS or DASH renditions that match
-- the content's ladder. One row per (creative, profile): concurrent stitches on any instance make
-- one job (insert … on conflict do nothing). Jobs run under a lease like the other workers; a failed
-- job waits until `retry_at` (back-off) before it is queued again.
create table ad_creative (
  -- sha256 of creative key + profile key: also the object store folder of the renditions
  key            text primary key,
  -- UniversalAdId / Creative@id / media URL hash
  creative_key   text not null,
  profile_key    text not null,
  protocol       text not null check (protocol in ('hls', 'dash')),
  -- the ladder the renditions match (lib/stitch/profile.ts)
  profile        jsonb not null,
  media_url      text not null,
  duration_sec   double precision not null,
  state          text not null check (state in ('pending', 'ready', 'failed')),
  -- changes with every (re)queue: renewing and finishing are fenced on it
  job_id         text not null,
  attempts       integer not null default 0,
  failures       integer not null default 0,
  error          text,
  -- the renditions written (master/MPD file name, rungs)
  renditions     jsonb,
  lease_owner    text,
  lease_until    timestamptz,
  retry_at       timestamptz,
  created_at     timestamptz not null default now(),
  queued_at      timestamptz not null default now(),
  ready_at       timestamptz,
  updated_at     timestamptz not null default now()
);
create index ad_creative_due on ad_creative (lease_until nulls first) where state = 'pending';
