create table squeeze_configured_ad (
  id            integer generated always as identity primary key,
  event_id      integer not null references squeeze_event_config (id) on delete cascade,
  abid          text not null,
  ad_uri        text not null,
  duration      double precision not null,
  aiid          text,
  slau          text,
  geo_lang_loc  text,
  is_curated    boolean not null default false,
  layout        text,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  unique (event_id, abid)
);

create index squeeze_configured_ad_lookup on squeeze_configured_ad (event_id, is_curated, geo_lang_loc);
