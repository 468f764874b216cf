create table brand_recognition (
  id          integer generated always as identity primary key,
  brand_name  text not null,
  match_type  text not null check (match_type in ('header', 'query_param', 'hostname')),
  match_name  text not null default '',
  match_value text not null,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);

-- A duplicate rule is the same brand, type, name and value; header names and hostnames compare case-insensitively.
create unique index brand_recognition_unique on brand_recognition (
  brand_name,
  match_type,
  (case when match_type = 'header' then lower(match_name) else match_name end),
  (case when match_type = 'hostname' then lower(match_value) else match_value end)
);

create index brand_recognition_brand_name on brand_recognition (brand_name text_pattern_ops, id);
