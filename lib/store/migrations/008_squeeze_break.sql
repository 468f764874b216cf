-- Squeeze ad breaks (docs/design.md §6): the durable record of a break, its ad assignments and its
-- planned squeezeback segments. A restart loses nothing: live breaks, their ads and every ready
-- output come back from here.
create table squeeze_break (
  id                 text primary key,
  event_id           integer not null references squeeze_event_config (id) on delete cascade,
  target             text not null check (target in ('event', 'streams')),
  status             text not null check (status in ('scheduled', 'active', 'completed', 'cancelled', 'failed')),
  start_time         timestamptz not null,
  end_time           timestamptz not null,
  break_duration     double precision not null,
  segment_sec        double precision not null,
  layout             text not null,
  abid               text,
  geo_lang_loc       text,
  decision_source    text,
  reason             text,
  -- [{key, source, ads: [DecidedAd]}]: streams that got the same creatives share one assignment
  assignments        jsonb not null default '[]',
  -- {stream_id: assignment key} for per-stream (DAI) decisions; others use default_assignment
  stream_assignments jsonb not null default '{}',
  default_assignment text,
  -- the effective event config the break was started with (layout, ratios, background, brand)
  settings           jsonb not null,
  lease_owner        text,
  lease_until        timestamptz,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);

-- At most one break in progress per event: a second one is a 409, decided by Postgres.
create unique index squeeze_break_one_live on squeeze_break (event_id) where status in ('scheduled', 'active');
create index squeeze_break_by_status on squeeze_break (status, end_time);

create table squeeze_break_segment (
  break_id     text not null references squeeze_break (id) on delete cascade,
  assignment   text not null,
  -- the content segment's path (what the DAI variant carries after the origin rewrite)
  content_path text not null,
  content_uri  text not null,
  idx          integer not null,
  start_time   timestamptz not null,
  duration     double precision not null,
  ad_index     integer not null,
  ad_offset    double precision not null,
  -- tracking points this segment carries: [{ad, event}]
  events       jsonb not null default '[]',
  output_key   text not null,
  status       text not null default 'pending' check (status in ('pending', 'ready', 'failed')),
  output_uri   text,
  attempts     integer not null default 0,
  error        text,
  updated_at   timestamptz not null default now(),
  primary key (break_id, assignment, content_path)
);
