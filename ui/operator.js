// The operator page: events, their live streams and breaks; start / extend / terminate through the
// management API; the decoded cue of a cue-triggered break; an hls.js preview of the event's
// squeezeback stream. The token comes from the field, or from the URL fragment (#token=…) that
// `npm run demo` prints; it is kept in this tab's sessionStorage only.
import { api as apiWith, esc, play } from './common.js';

const $ = (id) => document.getElementById(id);
const POLL_MS = 2000;
const state = {
  token: '',
  events: [],
  eventId: undefined,
  breaks: [],
  breakId: undefined,
  preview: undefined,
  previewFor: undefined,
  cueFor: undefined,
};
const api = apiWith(() => state.token);

function takeToken() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('sqz-token', decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search); // out of the address bar
  }
  state.token = sessionStorage.getItem('sqz-token') || '';
  $('token').value = state.token;
}

$('use-token').addEventListener('click', () => {
  state.token = $('token').value.trim();
  sessionStorage.setItem('sqz-token', state.token);
  void refresh();
});

const live = (b) => b && (b.status === 'scheduled' || b.status === 'active');
const selectedEvent = () => state.events.find((e) => e.id === state.eventId);
const selectedBreak = () => state.breaks.find((b) => b.break_id === state.breakId) ?? state.breaks[0];

async function refresh() {
  if (!state.token) {
    $('auth-error').textContent = 'Paste an operator token (npm run -s token) and press Use.';
    return;
  }
  try {
    const events = await api('GET', '/squeeze-events?page_size=100');
    $('auth-error').textContent = '';
    state.events = events.results;
    if (state.eventId === undefined && state.events.length) state.eventId = state.events[0].id;
    const counts = await Promise.all(
      state.events.map((e) =>
        api('GET', `/streams?event_id=${e.id}&page_size=1`).then(
          (r) => r.total_results,
          () => '?',
        ),
      ),
    );
    if (state.eventId !== undefined)
      state.breaks = (await api('GET', `/squeeze-ad-break?event_id=${state.eventId}&page_size=10`)).results;
    renderEvents(counts);
    renderBreaks();
    renderPreview();
    void renderCue();
    void renderCreatives();
  } catch (err) {
    $('auth-error').textContent =
      err.status === 401 || err.status === 403
        ? `The token was refused (${err.message}).`
        : `Cannot reach the API: ${err.message}`;
  }
}

function renderEvents(counts) {
  $('events').innerHTML = state.events
    .map((e, i) => {
      const current = e.id === state.eventId ? state.breaks.find(live) : undefined;
      return `<tr class="clickable${e.id === state.eventId ? ' selected' : ''}" data-event="${e.id}">
        <td>${e.id}</td><td><code>${esc(e.asset_id)}</code></td><td>${esc(e.brand_config_id)}</td><td>${esc(e.trigger ?? 'api')}</td>
        <td data-testid="stream-count">${esc(counts[i])}</td><td>${current ? `<span class="status ${esc(current.status)}">${esc(current.status)}</span>` : ''}</td></tr>`;
    })
    .join('');
  if (!state.events.length)
    $('events').innerHTML =
      '<tr><td colspan="6" class="dim">No events yet (PUT /api/v1/squeeze-event-config).</td></tr>';
  for (const tr of $('events').querySelectorAll('tr[data-event]'))
    tr.addEventListener('click', () => {
      state.eventId = Number(tr.dataset.event);
      state.breakId = undefined;
      void refresh();
    });
}

function renderBreaks() {
  const event = selectedEvent();
  $('breaks-of').textContent = event ? `of ${event.asset_id}` : '';
  const current = state.breaks.find(live);
  $('start').disabled = !event || !!current;
  $('extend').disabled = !current;
  $('terminate').disabled = !current;
  const now = Date.now();
  $('breaks').innerHTML = state.breaks.length
    ? state.breaks
        .map((b) => {
          const ready = b.segments.filter((s) => s.status === 'ready').length;
          const cells = b.segments
            .map((s) => {
              const start = Date.parse(s.expected_start);
              const playing = now >= start && now < start + s.duration * 1000;
              return `<span class="${esc(s.status)}${playing ? ' now' : ''}" title="segment ${s.index}: ${esc(s.status)}"></span>`;
            })
            .join('');
          return `<div class="clickable break" data-break="${esc(b.break_id)}" data-testid="break" data-status="${esc(b.status)}">
            <div class="row"><span class="status ${esc(b.status)}" data-testid="break-status">${esc(b.status)}</span>
              <code>${esc(b.break_id.slice(0, 8))}</code>
              <span class="dim">${esc(b.layout)} · ${esc(b.break_duration)} s · ${esc(new Date(b.start_time).toLocaleTimeString())}–${esc(new Date(b.end_time).toLocaleTimeString())}
              · ${esc(b.trigger?.source ?? 'api')} · ads: ${esc(b.decision?.source ?? '—')}${b.decision?.reason ? ` (${esc(b.decision.reason)})` : ''}</span></div>
            <div class="dim">segments ${ready}/${b.segments.length} composed</div>
            <div class="progress">${cells}</div></div>`;
        })
        .join('')
    : '<div class="dim">No breaks yet.</div>';
  for (const el of $('breaks').querySelectorAll('[data-break]'))
    el.addEventListener('click', () => {
      state.breakId = el.dataset.break;
      void renderCue();
    });
}

/** The newest conditioned ad creatives (GET /api/v1/ad-creatives): state, ladder, time to ready, why one failed. */
async function renderCreatives() {
  let items;
  try {
    items = (await api('GET', '/ad-creatives?page_size=20')).results;
  } catch (err) {
    $('creatives').innerHTML = `<tr><td colspan="5" class="dim">Cannot list them: ${esc(err.message)}</td></tr>`;
    return;
  }
  $('creatives').innerHTML = items.length
    ? items
        .map((c) => {
          const rungs = c.profile.rungs.map((r) => `${r.width}x${r.height}`).join(' ');
          const why =
            c.state === 'failed'
              ? ` — ${c.error ?? ''}${c.retry_at ? ` (retry after ${new Date(c.retry_at).toLocaleTimeString()})` : ''}`
              : '';
          return `<tr data-testid="creative" data-state="${esc(c.state)}"><td><span class="status ${esc(c.state)}">${esc(c.state)}</span></td><td>${esc(c.protocol)} ${esc(c.profile.container)}</td>
            <td>${esc(rungs)}</td><td>${c.renditions ? `${esc(c.renditions.seconds_to_ready)} s` : ''}</td>
            <td title="${esc(c.media_url)}"><code>${esc(c.media_url.split('/').pop().slice(0, 40))}</code><span class="dim">${esc(why)}</span></td></tr>`;
        })
        .join('')
    : '<tr><td colspan="5" class="dim">None yet: stitching conditions MP4-only ads on first use.</td></tr>';
}

/** The cue's binary as the playlist carried it (base64 or 0x hex), for the decode API. */
function cuePayload(cue) {
  for (const line of [cue.binary_tag, cue.tag]) {
    const m =
      /(?:EXT-OATCLS-SCTE35:|SCTE35-(?:OUT|IN|CMD)=|CUE="?|SPLICEPOINT-SCTE35:)(0x[0-9A-Fa-f]+|[A-Za-z0-9+/]+=*)/.exec(
        line ?? '',
      );
    if (m) return m[1];
  }
  return undefined;
}

/** The splice command (what the cue says) before the section's header fields. */
const commandFirst = (d) =>
  d && typeof d === 'object' && 'splice_command' in d ? { splice_command: d.splice_command, ...d } : d;

async function renderCue() {
  const b = selectedBreak();
  const key = b ? `${b.break_id}` : '';
  if (key === state.cueFor) return;
  state.cueFor = key;
  if (!b || b.trigger?.source !== 'scte35') {
    $('cue').innerHTML = b
      ? `<span class="dim">Break ${esc(b.break_id.slice(0, 8))} was started through the API.</span>`
      : '<span class="dim">No break selected.</span>';
    return;
  }
  const cue = b.trigger.cue ?? {};
  const payload = cuePayload(cue);
  let decoded = cue.scte35;
  if (payload) decoded = await api('POST', '/scte35/decode', { payload }).catch((err) => ({ error: err.message }));
  $('cue').innerHTML =
    `<div><code>${esc(cue.binary_tag ?? '')}</code></div><div><code>${esc(cue.tag ?? '')}</code></div>
    <div class="dim">${esc(cue.kind)} · ${esc(cue.dialect)} · ${esc(cue.duration_sec ?? '?')} s · media sequence ${esc(cue.media_sequence)}</div>
    <pre data-testid="cue">${esc(JSON.stringify(commandFirst(decoded ?? cue), null, 2))}</pre>`;
}

function renderPreview() {
  const event = selectedEvent();
  if (!event || state.previewFor === event.id) return;
  state.preview?.stop();
  state.previewFor = event.id;
  const src = `/squeezeback/${encodeURIComponent(event.asset_id)}/master.m3u8`;
  $('preview-src').textContent = src;
  state.preview = play($('preview'), src, (kind, text) => {
    if (kind === 'cue-out' || kind === 'cue-in' || kind === 'error')
      $('preview-state').textContent = `${new Date().toLocaleTimeString()} ${kind}: ${text}`;
  });
}

async function act(fn) {
  $('action-error').textContent = '';
  try {
    const b = await fn();
    if (b?.break_id) state.breakId = b.break_id;
  } catch (err) {
    $('action-error').textContent = err.message;
  }
  await refresh();
}

$('start').addEventListener('click', () =>
  act(() => {
    const body = { event_id: state.eventId, break_duration: Number($('duration').value) };
    if ($('layout').value) body.layout = $('layout').value;
    return api('POST', '/squeeze-ad-break', body);
  }),
);
$('extend').addEventListener('click', () =>
  act(() => api('POST', `/squeeze-ad-break/${state.breaks.find(live).break_id}/extend`, { additional_sec: 15 })),
);
$('terminate').addEventListener('click', () =>
  act(() => api('DELETE', `/squeeze-ad-break/${state.breaks.find(live).break_id}`)),
);

/** Where the preview is in program time: it plays behind now (the player's live offset plus the event's live-edge delay). */
function renderLatency() {
  const at = state.preview?.hls?.playingDate;
  $('preview-latency').textContent = at
    ? `preview at ${at.toLocaleTimeString()}, ${Math.max(0, (Date.now() - at.getTime()) / 1000).toFixed(0)} s behind now`
    : '';
}

takeToken();
void refresh();
setInterval(() => {
  void refresh();
  renderLatency();
}, POLL_MS);
