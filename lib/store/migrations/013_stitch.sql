-- Server-side stitching (issue 16): the catalog keeps dfpvideo:contentId besides the guid, and
-- stitched manifests live here so that any instance serves a cache_url another one handed out.
alter table catalog_item add column content_id text;
create index catalog_item_content_id on catalog_item (brand_name, content_id) where content_id is not null;

create table stitch_session (
  id          text primary key,
  -- protocol, brand, stream and asset: the same request within the TTL answers the same cache_url
  key         text not null unique,
  protocol    text not null,
  -- file name -> manifest text (master.m3u8 and its playlists, or manifest.mpd)
  files       jsonb not null,
  -- the POST answer ({cache_url, breaks, warnings})
  response    jsonb not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null
);
create index stitch_session_expires on stitch_session (expires_at);
