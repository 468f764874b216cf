/**
 * Cue tags of an HLS media playlist, per segment (docs/design.md §10). Every dialect seen in the
 * fixtures: EXT-X-CUE-OUT / -CUE-OUT-CONT / -CUE-IN, EXT-OATCLS-SCTE35 (gives the following
 * CUE-OUT/IN its binary), EXT-X-DATERANGE SCTE35-OUT/-IN/-CMD, Adobe EXT-X-CUE,
 * EXT-X-SPLICEPOINT-SCTE35, Elemental EXT-X-SCTE35 (and the EXT-SCTE35 spelling). Never throws:
 * an undecodable binary leaves an `error` on the cue.
 */
import { numberedLines } from '../hls/lines.js';
import { attributeList, num } from './attrs.js';
import { classifySection, sectionKey, type CueKind } from './classify.js';
import type { Scte35ErrorCode } from './errors.js';
import { tryDecodeSplice } from './section.js';
import type { SpliceInfoSection } from './types.js';

export type { CueKind } from './classify.js';

export type CueDialect =
  | 'cue-out'
  | 'cue-out-cont'
  | 'cue-in'
  | 'oatcls'
  | 'daterange'
  | 'adobe-cue'
  | 'splicepoint'
  | 'elemental'
  | 'ext-scte35';

export interface HlsCue {
  kind: CueKind;
  dialect: CueDialect;
  /** The tag line as written. */
  tag: string;
  /** The EXT-OATCLS-SCTE35 line that gave this CUE-OUT/CUE-IN its binary. */
  binary_tag?: string;
  /** 0-based line number of `tag`. */
  line: number;
  id?: string;
  duration_sec?: number;
  elapsed_sec?: number;
  scte35?: SpliceInfoSection;
  error?: { code: Scte35ErrorCode; message: string; offset: number };
  /** Trigger-once key: `daterange:<ID>`, else `<command>:<event id>:<adjusted pts | msn<n>>`, else `msn:<n>:<kind>`. */
  key: string;
}

export interface SegmentCues {
  index: number;
  media_sequence: number;
  /** EXT-X-PROGRAM-DATE-TIME of the segment in ms, carried forward by EXTINF durations from the last one. */
  program_date_time_ms?: number;
  duration: number;
  uri: string;
  cues: HlsCue[];
}

export interface HlsCueReading {
  segments: SegmentCues[];
  /** Cue tags after the last URI (their segment is not published yet); keyed with the next media sequence. */
  pending: HlsCue[];
}

interface Raw {
  dialect: CueDialect;
  tag: string;
  line: number;
  tagKind: CueKind | undefined;
  b64?: string;
  binaryTag?: string;
  id?: string;
  tagDuration?: number;
  contDuration?: number;
  elapsed?: number;
}

function tagParts(line: string): [string, string] {
  const colon = line.indexOf(':');
  return colon === -1 ? [line.trim(), ''] : [line.slice(0, colon), line.slice(colon + 1)];
}

const unquote = (s: string) => s.trim().replace(/^["\u201c\u201d]|["\u201c\u201d]$/g, '');

/** One cue tag line to its raw parts, or undefined for a line that is not a cue tag. */
function parseTag(name: string, value: string, tag: string, line: number): Raw | undefined {
  switch (name) {
    case '#EXT-X-CUE-OUT': {
      const v = value.trim();
      const d = v.includes('=') ? num(attributeList(v).get('DURATION')) : num(v);
      return { dialect: 'cue-out', tag, line, tagKind: 'out', tagDuration: d };
    }
    case '#EXT-X-CUE-OUT-CONT': {
      const v = value.trim();
      if (!v.includes('=')) {
        const [e, d] = v.split('/');
        return { dialect: 'cue-out-cont', tag, line, tagKind: 'cont', elapsed: num(e), contDuration: num(d) };
      }
      const a = attributeList(v);
      return {
        dialect: 'cue-out-cont',
        tag,
        line,
        tagKind: 'cont',
        elapsed: num(a.get('ELAPSEDTIME')),
        contDuration: num(a.get('DURATION')),
        b64: a.get('SCTE35'),
      };
    }
    case '#EXT-X-CUE-IN':
      return { dialect: 'cue-in', tag, line, tagKind: 'in' };
    case '#EXT-OATCLS-SCTE35':
      return { dialect: 'oatcls', tag, line, tagKind: undefined, b64: unquote(value) };
    case '#EXT-X-SPLICEPOINT-SCTE35':
      return { dialect: 'splicepoint', tag, line, tagKind: undefined, b64: unquote(value) };
    case '#EXT-X-DATERANGE': {
      const a = attributeList(value);
      const out = a.get('SCTE35-OUT');
      const inn = a.get('SCTE35-IN');
      const cmd = a.get('SCTE35-CMD');
      if (out === undefined && inn === undefined && cmd === undefined) return undefined; // not a cue (e.g. an interstitial)
      return {
        dialect: 'daterange',
        tag,
        line,
        tagKind: out !== undefined ? 'out' : inn !== undefined ? 'in' : undefined,
        b64: out ?? inn ?? cmd,
        id: a.get('ID'),
        tagDuration: num(a.get('DURATION')) ?? num(a.get('PLANNED-DURATION')),
      };
    }
    case '#EXT-X-CUE': {
      const a = attributeList(value);
      const type = (a.get('TYPE') ?? '').toLowerCase();
      const tagKind = type === 'spliceout' ? 'out' : type === 'splicein' ? 'in' : undefined;
      return {
        dialect: 'adobe-cue',
        tag,
        line,
        tagKind,
        b64: a.get('CUE'),
        id: a.get('ID'),
        tagDuration: num(a.get('DURATION')),
      };
    }
    case '#EXT-X-SCTE35':
    case '#EXT-SCTE35': {
      const a = attributeList(value);
      const out = (a.get('CUE-OUT') ?? '').toUpperCase();
      const tagKind =
        out === 'YES'
          ? 'out'
          : out === 'CONT'
            ? 'cont'
            : out === 'NO' || (a.get('CUE-IN') ?? '').toUpperCase() === 'YES'
              ? 'in'
              : undefined;
      return {
        dialect: name === '#EXT-X-SCTE35' ? 'elemental' : 'ext-scte35',
        tag,
        line,
        tagKind,
        b64: a.get('CUE'),
        id: a.get('ID'),
        tagDuration: num(a.get('DURATION')),
        elapsed: num(a.get('ELAPSED')),
      };
    }
  }
  return undefined;
}

function resolve(raw: Raw, msn: number): HlsCue {
  let scte35: SpliceInfoSection | undefined;
  let error: HlsCue['error'];
  let binKind: CueKind | undefined;
  let binDuration: number | undefined;
  let binKey: string | undefined;
  if (raw.b64 !== undefined) {
    const r = tryDecodeSplice(raw.b64);
    if (r.ok) {
      scte35 = r.value;
      const c = classifySection(r.value);
      binKind = c.kind;
      binDuration = c.duration_sec;
      binKey = sectionKey(r.value, c.event_id, msn);
    } else {
      error = r.error.toJSON();
    }
  }
  // CONT never starts a break; a binary with a meaning outranks the tag; otherwise the tag decides.
  const kind: CueKind = raw.tagKind === 'cont' ? 'cont' : (binKind ?? raw.tagKind ?? 'other');
  const duration = binDuration ?? raw.tagDuration ?? raw.contDuration;
  const key = raw.dialect === 'daterange' && raw.id ? `daterange:${raw.id}` : (binKey ?? `msn:${msn}:${kind}`);
  const cue: HlsCue = { kind, dialect: raw.dialect, tag: raw.tag, line: raw.line, key };
  if (raw.binaryTag !== undefined) cue.binary_tag = raw.binaryTag;
  if (raw.id !== undefined) cue.id = raw.id;
  if (duration !== undefined) cue.duration_sec = duration;
  if (raw.elapsed !== undefined) cue.elapsed_sec = raw.elapsed;
  if (scte35) cue.scte35 = scte35;
  if (error) cue.error = error;
  return cue;
}

/**
 * The cues of one segment. An OATCLS binary goes to the CUE-OUT/CUE-IN after it; redundant tags of
 * the same kind on one segment (DATERANGE + CUE-OUT for one break) share the key of the one with an
 * ID or binary, so the break triggers once.
 */
function finish(raws: Raw[], msn: number): HlsCue[] {
  const merged: Raw[] = [];
  let oatcls: Raw | undefined;
  for (const r of raws) {
    if (r.dialect === 'oatcls') {
      if (oatcls) merged.push(oatcls);
      oatcls = r;
    } else if (oatcls && (r.dialect === 'cue-out' || r.dialect === 'cue-in') && r.b64 === undefined) {
      merged.push(Object.assign({}, r, { b64: oatcls.b64, binaryTag: oatcls.tag }));
      oatcls = undefined;
    } else {
      merged.push(r);
    }
  }
  if (oatcls) merged.push(oatcls);
  const cues = merged.map((r) => resolve(r, msn));
  for (const kind of ['out', 'in'] as const) {
    const lead = cues.find((c) => c.kind === kind && !c.key.startsWith('msn:'));
    if (lead) for (const c of cues) if (c.kind === kind && c.key.startsWith('msn:')) c.key = lead.key;
  }
  return cues;
}

export function readHlsCues(playlist: string | readonly string[]): HlsCueReading {
  // LF, CRLF or a bare CR ends a line, as in every other playlist reader (lib/hls numberedLines, issue 24).
  const lines = typeof playlist === 'string' ? numberedLines(playlist) : playlist;
  const segments: SegmentCues[] = [];
  let msn = 0;
  let pdt: number | undefined;
  let duration = 0;
  let raws: Raw[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = String(lines[i]).trim();
    if (line === '') continue;
    if (!line.startsWith('#')) {
      const index = segments.length;
      const seg: SegmentCues = {
        index,
        media_sequence: msn + index,
        duration,
        uri: line,
        cues: finish(raws, msn + index),
      };
      if (pdt !== undefined) {
        seg.program_date_time_ms = pdt;
        pdt += duration * 1000;
      }
      segments.push(seg);
      raws = [];
      duration = 0;
      continue;
    }
    const [name, value] = tagParts(line);
    if (name === '#EXTINF') duration = num(value.split(',')[0]) ?? 0;
    else if (name === '#EXT-X-MEDIA-SEQUENCE') msn = segments.length === 0 ? (num(value) ?? 0) : msn;
    else if (name === '#EXT-X-PROGRAM-DATE-TIME') {
      const t = Date.parse(value.trim());
      pdt = Number.isNaN(t) ? undefined : t;
    } else {
      const raw = parseTag(name, value, line, i);
      if (raw) raws.push(raw);
    }
  }
  return { segments, pending: finish(raws, msn + segments.length) };
}
