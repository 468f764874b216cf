/** Arbitraries of plausible HLS playlists (media and master), as models and as raw text with formatting noise. */
import fc from 'fast-check';

export const DAI = 'https://dai.example.com';
export const rules = {
  daiHost: DAI,
  proxyBase: 'https://edge.example.net/dai/manifest',
  contentOrigin: 'https://origin.example.org',
  playlistUrl: `${DAI}/linear/hls/event/EV1/stream/s1:LOC/variant/720p.m3u8?tok=1`,
};

export type UriKind = 'root' | 'relative' | 'dot' | 'parent' | 'dai' | 'other' | 'protocol-relative' | 'unicode';

export interface GenSegment {
  uri: string;
  uriKind: UriKind;
  duration: number;
  discontinuity: boolean;
  pdt: boolean;
  key?: string;
  map?: string;
  byterange?: string;
  /** Cue and other tags before EXTINF, and after EXTINF (DATERANGE, comments, unknown tags). */
  before: string[];
  after: string[];
}

export interface GenMedia {
  version: number;
  targetDuration: number;
  mediaSequence: number | undefined;
  discontinuitySequence: number | undefined;
  type: '' | 'EVENT' | 'VOD';
  endList: boolean;
  independent: boolean;
  startMs: number;
  segments: GenSegment[];
  tail: string[];
}

const uriKind = fc.constantFrom<UriKind>(
  'root',
  'root',
  'root',
  'relative',
  'dot',
  'parent',
  'dai',
  'dai',
  'other',
  'protocol-relative',
  'unicode',
);

function uriOf(kind: UriKind, i: number, q: string): string {
  switch (kind) {
    case 'root':
      return `/content/s1/seg_${i}.ts${q}`;
    case 'relative':
      return `seg_${i}.ts${q}`;
    case 'dot':
      return `./sub/seg_${i}.ts${q}`;
    case 'parent':
      return `../up/seg_${i}.ts${q}`;
    case 'dai':
      return `${DAI}/linear/pod/ad_${i}.ts${q}`;
    case 'other':
      return `https://cdn${i % 3}.other.net/x/seg_${i}.ts${q}`;
    case 'protocol-relative':
      return `//cdn.other.net/pr/seg_${i}.ts${q}`;
    case 'unicode':
      return `/content/s1/séquence_${i}_中.ts${q}`;
  }
}

const tagNoise = fc.constantFrom(
  '#EXT-X-DATERANGE:ID="ad1",START-DATE="2026-01-01T00:00:00Z",DURATION=30,SCTE35-OUT=0xFC30',
  '#EXT-X-CUE-OUT:30',
  '#EXT-X-CUE-OUT:DURATION=60',
  '#EXT-X-CUE-OUT',
  '#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=30',
  '#EXT-X-CUE-OUT-CONT:12/30',
  '#EXT-X-CUE-IN',
  '#EXT-OATCLS-SCTE35:/DAlAAAAAAAAAP/wFAUAAAABf+/+ANgNkv4AFJlwAAEBAQAA5xULLA==',
  '#EXT-X-ASSET:CAID=0x0000000020FB6501',
  '#EXT-X-GAP',
  '#EXT-X-BITRATE:800',
  '# a comment',
  '## comment with URI="/x" inside',
  '#EXT-X-PROXIED:YES',
  '#EXT-X-CUSTOM-CUE:1',
  '#EXT-X-SCTE35:CUE="/DAIAAAAAAAAAAAQAAZ/I0VniQAQAgBDVUVJQAAAAH+cAAAAAA=="',
);

export const genSegment = (i: number): fc.Arbitrary<GenSegment> =>
  fc
    .record({
      uriKind,
      query: fc.constantFrom('', '', '?a=1', '?a=1&b=%20x'),
      duration: fc.oneof(
        fc.constantFrom(6, 6, 2, 4.004, 5.005, 10),
        fc.integer({ min: 1, max: 10000 }).map((n) => n / 1000),
      ),
      discontinuity: fc.boolean(),
      pdt: fc.boolean(),
      key: fc.option(
        fc.constantFrom(
          '#EXT-X-KEY:METHOD=AES-128,URI="/keys/k1",IV=0x0123456789ABCDEF0123456789ABCDEF',
          '#EXT-X-KEY:METHOD=AES-128,URI="https://keys.other.net/k2"',
          '#EXT-X-KEY:METHOD=NONE',
          '#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://x",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"',
          '#EXT-X-KEY:METHOD=AES-128,URI="k3.key"',
        ),
        { freq: 5, nil: undefined },
      ),
      map: fc.option(
        fc.constantFrom(
          '#EXT-X-MAP:URI="/init.mp4"',
          '#EXT-X-MAP:URI="init2.mp4",BYTERANGE="720@0"',
          `#EXT-X-MAP:URI="${DAI}/ad/init.mp4"`,
        ),
        { freq: 6, nil: undefined },
      ),
      byterange: fc.option(
        fc.constantFrom('#EXT-X-BYTERANGE:1000@0', '#EXT-X-BYTERANGE:2000', '#EXT-X-BYTERANGE:512@4096'),
        { freq: 8, nil: undefined },
      ),
      before: fc.array(tagNoise, { maxLength: 2 }),
      after: fc.array(tagNoise, { maxLength: 1 }),
    })
    .map((r) => ({
      uri: uriOf(r.uriKind, i, r.query),
      uriKind: r.uriKind,
      duration: r.duration,
      discontinuity: r.discontinuity,
      pdt: r.pdt,
      ...(r.key && { key: r.key }),
      ...(r.map && { map: r.map }),
      ...(r.byterange && { byterange: r.byterange }),
      before: r.before,
      after: r.after,
    }));

export const genMedia = (
  opts: { minSegments?: number; maxSegments?: number; live?: boolean } = {},
): fc.Arbitrary<GenMedia> =>
  fc.integer({ min: opts.minSegments ?? 0, max: opts.maxSegments ?? 40 }).chain((n) =>
    fc
      .record({
        version: fc.constantFrom(3, 4, 6, 7),
        mediaSequence: fc.option(fc.oneof(fc.nat({ max: 1000 }), fc.integer({ min: 2 ** 31, max: 2 ** 40 })), {
          freq: 6,
          nil: undefined,
        }),
        discontinuitySequence: fc.option(fc.nat({ max: 50 }), { freq: 2, nil: undefined }),
        type: opts.live
          ? fc.constantFrom<GenMedia['type']>('', '', '', 'EVENT')
          : fc.constantFrom<GenMedia['type']>('', '', 'EVENT', 'VOD'),
        endList: opts.live ? fc.constant(false) : fc.boolean(),
        independent: fc.boolean(),
        startMs: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
        allPdt: fc.boolean(),
        noDisc: fc.boolean(),
        segments: fc.tuple(...Array.from({ length: n }, (_, i) => genSegment(i))),
        tail: fc.array(
          fc.constantFrom(
            '#EXT-X-PART:DURATION=1.0,URI="/part1.mp4"',
            '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="/part2.mp4"',
            '#EXT-X-RENDITION-REPORT:URI="/r.m3u8",LAST-MSN=1',
            '# trailing comment',
          ),
          { maxLength: 3 },
        ),
      })
      .map((r) => {
        const segments = (r.segments as GenSegment[]).map((s) => ({
          ...s,
          pdt: r.allPdt || s.pdt,
          discontinuity: !r.noDisc && s.discontinuity,
        }));
        const targetDuration = Math.max(1, ...segments.map((s) => Math.round(s.duration)));
        return {
          version: r.version,
          targetDuration,
          mediaSequence: r.mediaSequence,
          discontinuitySequence: r.discontinuitySequence,
          type: r.type,
          endList: r.endList,
          independent: r.independent,
          startMs: r.startMs,
          segments,
          tail: r.tail,
        };
      }),
  );

/** The model's lines, LF-free. */
export function mediaLines(m: GenMedia, opts: { byteranges?: boolean } = {}): string[] {
  const out = ['#EXTM3U', `#EXT-X-VERSION:${m.version}`, `#EXT-X-TARGETDURATION:${m.targetDuration}`];
  if (m.mediaSequence !== undefined) out.push(`#EXT-X-MEDIA-SEQUENCE:${m.mediaSequence}`);
  if (m.discontinuitySequence !== undefined) out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${m.discontinuitySequence}`);
  if (m.type) out.push(`#EXT-X-PLAYLIST-TYPE:${m.type}`);
  if (m.independent) out.push('#EXT-X-INDEPENDENT-SEGMENTS');
  let t = m.startMs;
  for (const s of m.segments) {
    out.push(...s.before);
    if (s.discontinuity) out.push('#EXT-X-DISCONTINUITY');
    if (s.key) out.push(s.key);
    if (s.map) out.push(s.map);
    if (s.pdt) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(t).toISOString()}`);
    out.push(`#EXTINF:${s.duration},`);
    if (s.byterange && opts.byteranges !== false) out.push(s.byterange);
    out.push(...s.after);
    out.push(s.uri);
    t += s.duration * 1000;
  }
  out.push(...m.tail);
  if (m.endList) out.push('#EXT-X-ENDLIST');
  return out;
}

/** How raw text is laid out: line ends, padding, blank lines, a BOM, a final newline or not. */
export interface Layout {
  crlf: boolean;
  /** Per line (cycled): 0 none, 1 trailing spaces, 2 leading tab, 3 a blank line after, 4 trailing CR+space. */
  noise: number[];
  bom: boolean;
  finalNewline: boolean;
}

export const layout: fc.Arbitrary<Layout> = fc.record({
  crlf: fc.boolean(),
  noise: fc.oneof(
    fc.constant([0]).map((a) => [...a]),
    fc.array(
      fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
      { minLength: 1, maxLength: 30 },
    ),
  ),
  bom: fc.boolean(),
  finalNewline: fc.boolean(),
});

export function render(lines: string[], l: Layout): string {
  const eol = l.crlf ? '\r\n' : '\n';
  const parts = lines.map((line, i) => {
    switch (i === 0 ? 0 : l.noise[i % l.noise.length]) {
      case 1:
        return `${line}   `;
      case 2:
        return `\t${line}`;
      case 3:
        return `${line}${eol}`;
      case 4:
        return `${line}\r `;
      default:
        return line;
    }
  });
  const text = parts.join(eol) + (l.finalNewline ? eol : '');
  return (l.bom ? '\ufeff' : '') + text;
}

export interface GenMaster {
  lines: string[];
  /** Every URI written (variant lines and URI attributes), in order. */
  uris: string[];
  variants: number;
}

const masterUri = fc.constantFrom('root', 'relative', 'dai', 'dai-upper', 'other', 'protocol-relative');

function masterUriOf(kind: string, name: string): string {
  switch (kind) {
    case 'root':
      return `/linear/hls/${name}.m3u8?a=1&b=2`;
    case 'relative':
      return `${name}.m3u8`;
    case 'dai':
      return `${DAI}/linear/hls/event/EV1/${name}.m3u8`;
    case 'dai-upper':
      return `HTTPS://DAI.EXAMPLE.COM/v/${name}.m3u8`;
    case 'other':
      return `https://other.example.com/${name}.m3u8?x=${name}`;
    default:
      return `//cdn.other.net/${name}.m3u8`;
  }
}

export const genMaster: fc.Arbitrary<GenMaster> = fc
  .record({
    variants: fc.array(
      fc.record({
        kind: masterUri,
        bw: fc.integer({ min: 1, max: 20_000_000 }),
        res: fc.constantFrom('', ',RESOLUTION=1280x720', ',RESOLUTION=640x360,FRAME-RATE=29.970'),
        audio: fc.boolean(),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    media: fc.array(
      fc.record({ kind: masterUri, type: fc.constantFrom('AUDIO', 'SUBTITLES'), withUri: fc.boolean() }),
      { maxLength: 4 },
    ),
    iframes: fc.array(masterUri, { maxLength: 3 }),
    session: fc.boolean(),
    independent: fc.boolean(),
  })
  .map((r) => {
    const lines = ['#EXTM3U', '#EXT-X-VERSION:6'];
    const uris: string[] = [];
    if (r.independent) lines.push('#EXT-X-INDEPENDENT-SEGMENTS');
    if (r.session) lines.push('#EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="Title"');
    r.media.forEach((m, i) => {
      const uri = m.withUri || m.type === 'SUBTITLES' ? masterUriOf(m.kind, `${m.type.toLowerCase()}_${i}`) : undefined;
      if (uri) uris.push(uri);
      lines.push(
        `#EXT-X-MEDIA:TYPE=${m.type},GROUP-ID="g${m.type}",NAME="n${i}",LANGUAGE="en",DEFAULT=${i === 0 ? 'YES' : 'NO'},AUTOSELECT=YES${uri ? `,URI="${uri}"` : ''}`,
      );
    });
    const hasAudio = r.media.some((m) => m.type === 'AUDIO');
    r.variants.forEach((v, i) => {
      const uri = masterUriOf(v.kind, `v${i}`);
      uris.push(uri);
      lines.push(
        `#EXT-X-STREAM-INF:BANDWIDTH=${v.bw},CODECS="avc1.64001f,mp4a.40.2"${v.res}${v.audio && hasAudio ? ',AUDIO="gAUDIO"' : ''}`,
        uri,
      );
    });
    r.iframes.forEach((k, i) => {
      const uri = masterUriOf(k, `iframe${i}`);
      uris.push(uri);
      lines.push(`#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=${100000 + i},CODECS="avc1.64001f",URI="${uri}"`);
    });
    return { lines, uris, variants: r.variants.length };
  });
