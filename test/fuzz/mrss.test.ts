/**
 * Property tests of the streaming MRSS reader (issue 18 item 5): generated RSS 2.0 / Atom feeds
 * (media:content direct and in media:group, thumbnails, cue points, CDATA, entities, declared or
 * undeclared prefixes, pagination links) read back with the values generated; malformed input and
 * any DOCTYPE give MrssError and nothing else; random chunk splits give what the whole document gives.
 * 200 runs per property by default; `FUZZ_RUNS=N npx tap -t0 test/fuzz` for a long run, `FUZZ_SEED=S` to replay.
 */
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import fc from 'fast-check';
import { MrssError, MrssReader, parseMrss, type CatalogItem, type MrssLimits } from '../../lib/catalog/mrss.js';
import {
  cuts,
  doctypeDoc,
  encodeText,
  fixtureTexts,
  httpUrl,
  mutated,
  outcome,
  paramsFor,
  splitAt,
  textEncoding,
  xmlEscape,
  xmlText,
} from './common.js';

const fixtures = fixtureTexts('mrss', ['.xml', '.rss', '.atom']).map((f) => f.text);

const rendition = fc.record({
  url: fc.tuple(httpUrl, fc.constantFrom('', '.m3u8', '.mpd', '.mp4')).map(([u, ext]) => u.replace(/\?.*/, '') + ext),
  type: fc.option(fc.constantFrom('video/mp4', 'application/x-mpegURL', 'application/dash+xml', 'video/webm'), {
    nil: undefined,
  }),
  bitrate: fc.option(fc.nat({ max: 20000 }), { nil: undefined }),
  width: fc.option(fc.nat({ max: 4000 }), { nil: undefined }),
  height: fc.option(fc.nat({ max: 3000 }), { nil: undefined }),
  duration: fc.option(fc.nat({ max: 7200 }), { nil: undefined }),
});
type GenRendition = typeof rendition extends fc.Arbitrary<infer T> ? T : never;

const item = fc.record({
  key: fc.constantFrom('guid', 'contentId', 'link', 'none'),
  guid: xmlText(40),
  title: fc.option(xmlText(), { nil: undefined }),
  description: fc.option(xmlText(60), { nil: undefined }),
  published: fc.option(
    fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2035, 0, 1) }).map((ms) => Math.floor(ms / 1000) * 1000),
    { nil: undefined },
  ),
  duration: fc.option(fc.nat({ max: 36000 }), { nil: undefined }),
  direct: fc.array(rendition, { maxLength: 3 }),
  group: fc.array(rendition, { maxLength: 3 }),
  thumbnails: fc.array(httpUrl, { maxLength: 3 }),
  cues: fc.array(fc.nat({ max: 7200 }), { maxLength: 4 }),
  cueForm: fc.constantFrom('dfpvideo', 'ad', 'jwplayer'),
  extra: fc.option(xmlText(20), { nil: undefined }),
});
type GenItem = typeof item extends fc.Arbitrary<infer T> ? T : never;
const feed = fc.record({
  atom: fc.boolean(),
  declare: fc.boolean(),
  decl: fc.constantFrom(
    '',
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    '\ufeff<?xml version="1.0"?>',
    '  \n<?xml version="1.0"?>',
  ),
  next: fc.option(httpUrl, { nil: undefined }),
  channelThumb: fc.option(httpUrl, { nil: undefined }),
  items: fc.array(item, { maxLength: 6 }),
  enc: fc.array(textEncoding, { minLength: 1, maxLength: 4 }),
  comments: fc.boolean(),
});
type GenFeed = typeof feed extends fc.Arbitrary<infer T> ? T : never;

const clock = (sec: number) =>
  `${String(Math.floor(sec / 3600)).padStart(2, '0')}:${String(Math.floor(sec / 60) % 60).padStart(2, '0')}:${String(sec % 60).padStart(2, '0')}.00`;

function renderFeed(f: GenFeed): string {
  let n = 0;
  const text = (s: string) => encodeText(s, f.enc[n++ % f.enc.length]!);
  const attrs = (a: Record<string, string | number | undefined>) =>
    Object.entries(a)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`)
      .join('');
  // Prefixes are matched by name (declared or not): Media RSS is `media:`.
  const media = 'media';
  const content = (r: GenRendition) =>
    `<${media}:content${attrs({ url: r.url, type: r.type, bitrate: r.bitrate, width: r.width, height: r.height, duration: r.duration })}/>`;
  const c = f.comments ? '<!-- c -->' : '';
  const items = f.items.map((i: GenItem) => {
    const tag = f.atom ? 'entry' : 'item';
    let s = `<${tag}>${c}`;
    if (i.key === 'guid') s += f.atom ? `<id>${text(i.guid)}</id>` : `<guid isPermaLink="false">${text(i.guid)}</guid>`;
    else if (i.key === 'contentId') s += `<dfpvideo:contentId>${text(i.guid)}</dfpvideo:contentId>`;
    else if (i.key === 'link')
      s += f.atom ? `<link rel="alternate" href="${xmlEscape(i.guid)}"/>` : `<link>${text(i.guid)}</link>`;
    if (i.title !== undefined) s += `<title>${text(i.title)}</title>`;
    if (i.description !== undefined)
      s += f.atom ? `<summary>${text(i.description)}</summary>` : `<description>${text(i.description)}</description>`;
    if (i.published !== undefined)
      s += f.atom
        ? `<updated>${new Date(i.published).toISOString()}</updated>`
        : `<pubDate>${new Date(i.published).toUTCString()}</pubDate>`;
    if (i.duration !== undefined) s += `<itunes:duration>${clock(i.duration)}</itunes:duration>`;
    s += i.direct.map(content).join(c);
    if (i.group.length) s += `<${media}:group>${i.group.map(content).join('')}</${media}:group>`;
    s += i.thumbnails.map((u) => `<${media}:thumbnail url="${xmlEscape(u)}"/>`).join('');
    if (i.cues.length) {
      const v =
        i.cueForm === 'ad'
          ? i.cues.map((x) => x * 1000).join(',')
          : i.cueForm === 'jwplayer'
            ? i.cues.map(clock).join(', ')
            : i.cues.join(',');
      s += `<${i.cueForm}:cuepoints>${v}</${i.cueForm}:cuepoints>`;
    }
    if (i.extra !== undefined) s += `<dc:creator>${text(i.extra)}</dc:creator>`;
    return `${s}</${tag}>`;
  });
  const ns = f.declare
    ? ` xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"`
    : '';
  const next = f.next ? `<${f.atom ? '' : 'atom:'}link rel="next" href="${xmlEscape(f.next)}"/>` : '';
  const thumb = f.channelThumb ? `<${media}:thumbnail url="${xmlEscape(f.channelThumb)}"/>` : '';
  if (f.atom)
    return `${f.decl}<feed xmlns="http://www.w3.org/2005/Atom"${ns}><title>Feed</title>${next}${thumb}${items.join('\n')}</feed>`;
  return `${f.decl}<rss version="2.0"${ns}><channel><title>Feed &amp; more</title>${next}${thumb}\n${items.join('\n')}</channel></rss>\n`;
}

const kindOf = (url: string, type: string) =>
  type.includes('mpegURL') || url.endsWith('.m3u8')
    ? 'hls'
    : type.includes('dash') || url.endsWith('.mpd')
      ? 'dash'
      : type.includes('mp4') || url.endsWith('.mp4')
        ? 'mp4'
        : 'other';

function expectedItems(f: GenFeed): Array<Omit<CatalogItem, 'content_hash' | 'extras'>> {
  const channelThumbs = f.channelThumb ? [f.channelThumb] : [];
  return f.items
    .filter((i) => i.key !== 'none')
    .map((i) => {
      const rend = (r: GenRendition) =>
        JSON.parse(
          JSON.stringify({
            url: r.url,
            type: r.type ?? '',
            kind: kindOf(r.url, r.type ?? ''),
            bitrate: r.bitrate,
            width: r.width,
            height: r.height,
            duration: r.duration,
          }),
        );
      const renditions = (i.direct.length ? i.direct : i.group).map(rend);
      return {
        guid: i.guid.slice(0, 512),
        title: i.title ?? '',
        description: i.description ?? '',
        published: i.published === undefined ? null : new Date(i.published).toISOString(),
        duration:
          i.duration ?? renditions.find((r: { duration?: number }) => r.duration !== undefined)?.duration ?? null,
        renditions,
        thumbnails: [...new Set(i.thumbnails.length ? i.thumbnails : channelThumbs)],
        cue_points: [...new Set(i.cues)].sort((a, b) => a - b),
      };
    });
}

const strip = (items: CatalogItem[]) => items.map(({ content_hash: _h, extras: _e, ...rest }) => rest);

t.test(
  'generated feeds read back with the generated values (items, renditions by precedence, cue points, pagination link)',
  async () => {
    fc.assert(
      fc.property(feed, (f) => {
        const xml = renderFeed(f);
        const r = parseMrss(xml);
        const want = expectedItems(f);
        if (!isDeepStrictEqual(strip(r.items), want))
          throw new Error(
            `items differ\n${xml}\n--- got\n${JSON.stringify(strip(r.items))}\n--- want\n${JSON.stringify(want)}`,
          );
        if (r.skipped !== f.items.length - want.length) throw new Error(`skipped ${r.skipped}`);
        if (r.nextLink !== f.next) throw new Error(`next link ${r.nextLink}`);
        f.items
          .filter((i) => i.key !== 'none')
          .forEach((i, k) => {
            const extras = r.items[k]!.extras;
            if (i.extra !== undefined && extras['dc:creator'] !== i.extra)
              throw new Error(`extras ${JSON.stringify(extras)}`);
          });
      }),
      paramsFor(1),
    );
  },
);

/** What reading gives: the items (with their hashes), or the error's class. */
function read(
  chunks: string[],
  limits?: MrssLimits,
): { items: CatalogItem[]; skipped: number; nextLink?: string } | { error: string } {
  const items: CatalogItem[] = [];
  const reader = new MrssReader((i) => items.push(i), limits);
  try {
    for (const c of chunks) reader.write(c);
    reader.close();
  } catch (err) {
    if (!(err instanceof MrssError)) throw err;
    return { error: 'MrssError' };
  }
  return reader.nextLink
    ? { items, skipped: reader.skipped, nextLink: reader.nextLink }
    : { items, skipped: reader.skipped };
}

const anyFeed = fc.oneof(
  feed.map(renderFeed),
  fc.constantFrom(...fixtures),
  mutated(fc.constantFrom(...fixtures)),
  mutated(feed.map(renderFeed)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  doctypeDoc,
);
const limits = fc.option(
  fc.record({
    maxItems: fc.integer({ min: 0, max: 8 }),
    maxItemChars: fc.integer({ min: 0, max: 2000 }),
    maxDepth: fc.integer({ min: 1, max: 10 }),
  }),
  { nil: undefined },
);

t.test(
  'streamed in random chunks, the reader gives what the whole document gives (items and hashes, or MrssError)',
  async () => {
    fc.assert(
      fc.property(anyFeed, cuts, limits, (xml, fractions, lim) => {
        const whole = outcome(() => parseMrss(xml, lim));
        if (!whole.ok && !(whole.error instanceof MrssError)) throw new Error(`parseMrss threw ${String(whole.error)}`);
        const chunked = read(splitAt(xml, fractions), lim);
        const expected = whole.ok ? whole.value : { error: 'MrssError' };
        if (!isDeepStrictEqual(chunked, expected))
          throw new Error(
            `chunked differs:\n${JSON.stringify(chunked).slice(0, 2000)}\n--- whole\n${JSON.stringify(expected).slice(0, 2000)}`,
          );
      }),
      paramsFor(1),
    );
  },
);

t.test('a DOCTYPE is always refused with MrssError', async () => {
  fc.assert(
    fc.property(doctypeDoc, (xml) => {
      const r = outcome(() => parseMrss(xml));
      if (r.ok || !(r.error instanceof MrssError))
        throw new Error(`not refused: ${r.ok ? JSON.stringify(r.value).slice(0, 200) : String(r.error)}`);
    }),
    paramsFor(0.25),
  );
});
