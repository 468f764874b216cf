-- Per-stream tracking of a break's ads: streams that got the same creatives share one assignment
-- (one composed output), but each keeps the tracking URLs its own ad response gave it.
-- {stream_id: [tracking of ad 0, tracking of ad 1, ...]}
alter table squeeze_break add column stream_tracking jsonb not null default '{}';
