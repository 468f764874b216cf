-- HTTP validators of a feed's first page, for conditional requests (ETag / If-Modified-Since).
alter table feed_run add column etag text, add column last_modified text;
