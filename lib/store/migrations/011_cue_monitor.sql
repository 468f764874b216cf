-- The SCTE-35 cue monitor (issue 15; docs/design.md §10).
-- What started a break: {"source": "api"} or {"source": "scte35", "key": …, "cue": {…decoded}}.
alter table squeeze_break add column "trigger" jsonb not null default '{"source": "api"}';

-- One monitoring instance per event: a lease with a TTL, renewed every tick, taken over when it
-- lapses (the break worker's pattern).
create table squeeze_cue_monitor_lease (
  event_id    integer primary key references squeeze_event_config (id) on delete cascade,
  owner       text not null,
  lease_until timestamptz not null
);

-- Trigger once: a cue (its key from the cue reader, plus its kind: an out/in pair sharing a
-- DATERANGE ID shares its key) is claimed by inserting this row before its break starts or ends.
-- In Postgres rather than the state store: a claim survives the loss of Redis, as the break does.
create table squeeze_cue_claim (
  event_id   integer not null references squeeze_event_config (id) on delete cascade,
  cue_key    text not null,
  kind       text not null,
  break_id   text,
  outcome    text,
  claimed_at timestamptz not null default now(),
  primary key (event_id, cue_key, kind)
);
create index squeeze_cue_claim_age on squeeze_cue_claim (claimed_at);
