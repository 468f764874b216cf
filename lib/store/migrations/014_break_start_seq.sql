-- Breaks on sources without EXT-X-PROGRAM-DATE-TIME (issue 14, item 5): the media sequence of the
-- break's first segment in the source playlists. Segments without a program date-time are placed
-- by it and the EXTINF durations accumulated from it (docs/decisions.md). Null for breaks from
-- before this column: they are placed by program date-time only, as before.
alter table squeeze_break add column start_seq bigint;
