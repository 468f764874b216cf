/**
 * DecidedAd[] to a VAST 4.0 document for players (the `/vast?stream_id=` answer): one `<Ad>` per
 * ad in play order (`sequence` 1…n, an ad pod), each an `<InLine>` with one linear creative and
 * its progressive MP4. URLs go in CDATA sections; a `]]>` inside one is split across two sections so
 * it cannot close the section early, and characters XML 1.0 forbids are dropped. No ads gives the
 * empty VAST (`<VAST version="4.0"/>`), the VAST 4 way of saying "no ad".
 */
import { TRACKING_EVENTS, type DecidedAd } from './types.js';
import { formatVastDuration } from './vast.js';

export interface WriteVastOptions {
  version?: '4.0';
}

const DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NOT_XML_CHAR =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function clean(s: string): string {
  return s.replace(NOT_XML_CHAR, '');
}

export function escapeXml(s: string): string {
  return clean(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

export function cdata(s: string): string {
  return `<![CDATA[${clean(s).replace(/]]>/g, ']]]]><![CDATA[>')}]]>`;
}

function attrs(pairs: Array<[string, string | number | undefined]>): string {
  return pairs
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
}

function adXml(ad: DecidedAd, sequence: number): string {
  const out: string[] = [];
  const t = (depth: number, line: string) => out.push('  '.repeat(depth) + line);
  t(
    1,
    `<Ad${attrs([
      ['id', ad.adId],
      ['sequence', sequence],
    ])}>`,
  );
  t(2, '<InLine>');
  t(3, `<AdSystem>${escapeXml(ad.adSystem ?? 'squeezeback')}</AdSystem>`);
  t(3, `<AdTitle>${escapeXml(ad.title ?? ad.adId)}</AdTitle>`);
  for (const url of ad.tracking.impression ?? []) t(3, `<Impression>${cdata(url)}</Impression>`);
  t(3, '<Creatives>');
  t(
    4,
    `<Creative${attrs([
      ['id', ad.creativeId],
      ['sequence', 1],
    ])}>`,
  );
  // VAST 4.0 requires UniversalAdId; "unknown" is its documented value when there is none (4.0 attributes, 4.1 text).
  t(5, '<UniversalAdId idRegistry="unknown" idValue="unknown">unknown</UniversalAdId>');
  t(5, '<Linear>');
  t(6, `<Duration>${formatVastDuration(ad.durationSec)}</Duration>`);
  const events = TRACKING_EVENTS.filter((e) => e !== 'impression' && ad.tracking[e]?.length);
  if (events.length) {
    t(6, '<TrackingEvents>');
    for (const e of events) for (const url of ad.tracking[e]!) t(7, `<Tracking event="${e}">${cdata(url)}</Tracking>`);
    t(6, '</TrackingEvents>');
  }
  if (ad.clickThrough) {
    t(6, '<VideoClicks>');
    t(7, `<ClickThrough>${cdata(ad.clickThrough)}</ClickThrough>`);
    t(6, '</VideoClicks>');
  }
  t(6, '<MediaFiles>');
  t(
    7,
    `<MediaFile${attrs([
      ['delivery', 'progressive'],
      ['type', 'video/mp4'],
      ['width', ad.width],
      ['height', ad.height],
      ['bitrate', ad.bitrate],
    ])}>${cdata(ad.uri)}</MediaFile>`,
  );
  t(6, '</MediaFiles>');
  t(5, '</Linear>');
  t(4, '</Creative>');
  t(3, '</Creatives>');
  t(2, '</InLine>');
  t(1, '</Ad>');
  return out.join('\n');
}

/** A VAST 4.0 document for the ads, in order; `writeVast([])` is the empty VAST. */
export function writeVast(ads: DecidedAd[], opts: WriteVastOptions = {}): string {
  const version = opts.version ?? '4.0';
  if (!ads.length) return `${DECL}<VAST version="${version}"/>`;
  return `${DECL}<VAST version="${version}">\n${ads.map((ad, i) => adXml(ad, i + 1)).join('\n')}\n</VAST>`;
}
