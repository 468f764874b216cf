create table brand_token (
  brand_name  text primary key,
  token_hash  bytea not null,
  updated_at  timestamptz not null default now()
);

create table catalog_item (
  brand_name    text not null,
  guid          text not null,
  title         text not null default '',
  description   text not null default '',
  published_at  timestamptz,
  duration      double precision,
  renditions    jsonb not null default '[]',
  thumbnails    jsonb not null default '[]',
  cue_points    jsonb not null default '[]',
  extras        jsonb not null default '{}',
  content_hash  text not null,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  primary key (brand_name, guid)
);

create index catalog_item_brand_published on catalog_item (brand_name, published_at desc nulls last);
