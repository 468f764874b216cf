-- One row per feed: the state of its pull runs, leased to one instance at a time.
create table feed_run (
  feed_name    text primary key references feed_config (feed_name) on update cascade on delete cascade,
  state        text not null default 'idle' check (state in ('idle', 'running')),
  lease_owner  text,
  lease_until  timestamptz,
  next_due_at  timestamptz,
  mode         text,
  page_index   integer not null default 0,
  next_url     text,
  first_guid   text,
  pages        integer not null default 0,
  inserted     integer not null default 0,
  updated      integer not null default 0,
  unchanged    integer not null default 0,
  started_at   timestamptz,
  last_run_at  timestamptz,
  last_error   text
);

insert into feed_run (feed_name, next_due_at) select feed_name, now() from feed_config on conflict do nothing;
