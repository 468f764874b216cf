create table squeeze_brand_config (
  brand_id    text primary key,
  config      jsonb not null,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);

create table squeeze_event_config (
  id               integer generated always as identity primary key,
  asset_id         text not null unique,
  caid             text unique,
  brand_config_id  text not null references squeeze_brand_config (brand_id) on update cascade,
  config           jsonb not null,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now()
);
