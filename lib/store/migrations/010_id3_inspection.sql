-- ID3 tag inspection jobs (spec "ID3 tag inspection"; docs/design.md §8, §1): one row per stream, so
-- concurrent first requests on any instance start one job (insert … on conflict). A finished row
-- is the result, kept for ID3_RESULT_TTL_SEC; a request after that resets the row to a new job.
-- Jobs run under a lease (owner, expiry renewed while running); a lapsed lease is taken over.
create table id3_inspection (
  stream_id    text primary key,
  -- changes with every new job on the row: finishing and renewing are fenced on it
  job_id       text not null,
  -- what is inspected: the stream's master (or MPD) on DAI_HOST, or a pod manifest given by URL
  source_url   text not null,
  whole_pod    boolean not null default false,
  status       text not null check (status in ('pending', 'complete', 'failed')),
  ad_pods      jsonb,
  error        text,
  attempts     integer not null default 0,
  lease_owner  text,
  lease_until  timestamptz,
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now(),
  finished_at  timestamptz
);

create index id3_inspection_due on id3_inspection (lease_until nulls first) where status = 'pending';
create index id3_inspection_finished on id3_inspection (finished_at) where status <> 'pending';
