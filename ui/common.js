// Shared by the operator and player pages: escaping, the management API with the operator's
// token, and an hls.js player with its event log. Plain ES module, no build step.

/** Text for innerHTML. */
export const esc = (v) =>
  String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

/** The management API (/api/v1) with a bearer token; errors carry the problem+json answer. */
export function api(getToken) {
  return async (method, path, body) => {
    const headers = { Authorization: `Bearer ${getToken()}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) throw new ApiError(res.status, json);
    return json;
  };
}

/**
 * Plays `src` in `video` with hls.js (Safari's native HLS otherwise) and reports what a squeezeback
 * player cares about through `log(kind, text)`: cue-out / cue-in tags of each playlist refresh
 * (once per segment), ID3 cues, errors. Answers { hls, stop, variantUrl } (the variant playlist
 * last loaded, which names the stream id).
 */
export function play(video, src, log) {
  const Hls = window.Hls;
  const seen = new Set();
  if (!Hls || !Hls.isSupported()) {
    if (video.canPlayType('application/vnd.apple.mpegurl')) {
      video.src = src;
      void video.play().catch(() => undefined);
      return { hls: undefined, stop: () => video.removeAttribute('src'), variantUrl: src };
    }
    log('error', 'this browser cannot play HLS (no MediaSource, hls.js not loaded)');
    return { hls: undefined, stop: () => undefined, variantUrl: '' };
  }
  const hls = new Hls({ liveSyncDurationCount: 3, enableWorker: true });
  const player = {
    hls,
    stopped: false,
    stop() {
      this.stopped = true;
      this.hls?.destroy();
    },
    variantUrl: '',
  };
  hls.on(Hls.Events.LEVEL_LOADED, (_e, data) => {
    player.variantUrl = data.details.url;
    for (const frag of data.details.fragments) {
      const tags = (frag.tagList || []).map((t) => t.join(':'));
      for (const tag of tags) {
        const kind = /^EXT-X-CUE-OUT(?!-CONT)/.test(tag) ? 'cue-out' : /^EXT-X-CUE-IN/.test(tag) ? 'cue-in' : undefined;
        const key = `${kind}:${frag.sn}`;
        if (!kind || seen.has(key)) continue;
        seen.add(key);
        log(kind, `#${tag} before segment ${frag.sn} (${frag.relurl || frag.url})`);
      }
    }
  });
  hls.on(Hls.Events.FRAG_PARSING_METADATA, (_e, data) => {
    for (const sample of data.samples || []) log('id3', describeId3(sample.data), sample);
  });
  hls.on(Hls.Events.ERROR, (_e, data) => {
    if (!data.fatal) return;
    const why = String(data.error?.message ?? data.reason ?? '').slice(0, 160);
    log('error', `fatal ${data.type}: ${data.details}${why ? ` (${why})` : ''}; restarting the player`);
    // A live preview should outlive a bad refresh: start again from the live edge.
    hls.destroy();
    if (!player.stopped) setTimeout(() => !player.stopped && Object.assign(player, play(video, src, log)), 1000);
  });
  hls.loadSource(src);
  hls.attachMedia(video);
  video.muted = true;
  void video.play().catch(() => undefined);
  return player;
}

/** The frames of an ID3v2 tag: TXXX description/value and PRIV owners (what com.<brand>.vtg uses). */
export function id3Frames(bytes) {
  const frames = [];
  if (!bytes || bytes.length < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return frames;
  const syncsafe = (i) => (bytes[i] << 21) | (bytes[i + 1] << 14) | (bytes[i + 2] << 7) | bytes[i + 3];
  const end = Math.min(bytes.length, 10 + syncsafe(6));
  const latin = (a, b) => String.fromCharCode(...bytes.subarray(a, b));
  for (let i = 10; i + 10 <= end;) {
    const id = latin(i, i + 4);
    const size =
      bytes[3] === 4
        ? syncsafe(i + 4)
        : (bytes[i + 4] << 24) | (bytes[i + 5] << 16) | (bytes[i + 6] << 8) | bytes[i + 7];
    if (!/^[A-Z0-9]{4}$/.test(id) || size <= 0) break;
    const body = bytes.subarray(i + 10, Math.min(end, i + 10 + size));
    const nul = body.indexOf(0, id === 'TXXX' ? 1 : 0);
    if (id === 'PRIV')
      frames.push({
        id,
        owner: String.fromCharCode(...body.subarray(0, nul < 0 ? body.length : nul)),
        value: new TextDecoder().decode(body.subarray(nul + 1)),
      });
    else if (id === 'TXXX')
      frames.push({
        id,
        owner: new TextDecoder().decode(body.subarray(1, nul)),
        value: new TextDecoder().decode(body.subarray(nul + 1)).replace(/\0+$/, ''),
      });
    else frames.push({ id });
    i += 10 + size;
  }
  return frames;
}

function describeId3(bytes) {
  const frames = id3Frames(bytes);
  if (!frames.length) return `ID3 (${bytes?.length ?? 0} bytes, unreadable)`;
  return frames.map((f) => (f.owner !== undefined ? `${f.id} ${f.owner} = ${f.value}` : f.id)).join(', ');
}

/** The com.<brand>.vtg owner of an ID3 tag, if it carries one. */
export function vtgOwner(bytes) {
  return id3Frames(bytes).find((f) => f.owner !== undefined && /^com\.[^.]+\.vtg$/.test(f.owner));
}
