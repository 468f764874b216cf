create table feed_config (
  id          integer generated always as identity primary key,
  feed_name   text not null unique,
  brand_name  text not null unique,
  config      jsonb not null,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);
