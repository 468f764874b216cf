// The player page: plays ?src= with hls.js and logs cue-out / cue-in, ID3 cues and the /vast
// calls a squeezeback player makes when it sees the com.<brand>.vtg tag (once per break value).
import { esc, play, vtgOwner } from './common.js';

const $ = (id) => document.getElementById(id);
const logEl = $('log');
let current;
const vastAsked = new Set();

function log(kind, text) {
  const line = document.createElement('div');
  line.dataset.kind = kind;
  line.innerHTML = `<span class="dim">${esc(new Date().toLocaleTimeString())}</span> <b>${esc(kind)}</b> ${esc(text)}`;
  logEl.append(line);
  logEl.scrollTop = logEl.scrollHeight;
}

/** The stream id of a squeezeback (…/{asset}/{9 digits}/…) or DAI (…/stream/{id}/…) variant URL. */
function streamIdOf(url) {
  const m = /\/squeezeback\/[^/]+\/(\d{9})\//.exec(url) ?? /\/streams?\/([^/?#]+)\//.exec(url);
  return m ? decodeURIComponent(m[1]) : undefined;
}

async function askVast(src, variantUrl, value) {
  const streamId = streamIdOf(variantUrl || src);
  if (!streamId || vastAsked.has(`${streamId}:${value}`)) return;
  vastAsked.add(`${streamId}:${value}`);
  const vast = new URL(`/vast?stream_id=${encodeURIComponent(streamId)}`, new URL(src, location.href));
  // The tag's value is the break id: the service then answers that break even when this player
  // is behind the live edge and a later break has begun.
  if (/^[0-9a-f-]{36}$/.test(value ?? '')) vast.searchParams.set('break_id', value);
  try {
    const res = await fetch(vast);
    const xml = await res.text();
    const ads = (xml.match(/<Ad[\s>]/g) ?? []).length;
    log(
      'vast',
      `GET ${vast.pathname}${vast.search} → ${res.status}, ${ads} ad(s), ${(xml.match(/\/beacon\?/g) ?? []).length} beacon URL(s)`,
    );
  } catch (err) {
    log('vast', `GET ${vast.pathname}${vast.search} failed: ${err.message}`);
  }
}

function start(src) {
  current?.stop();
  logEl.textContent = '';
  log('load', src);
  const player = play($('video'), src, (kind, text, sample) => {
    log(kind, text);
    const vtg = kind === 'id3' ? vtgOwner(sample?.data) : undefined;
    if (vtg) void askVast(src, player.variantUrl, vtg.value);
  });
  current = player;
}

const params = new URLSearchParams(location.search);
$('src').value = params.get('src') ?? '';
$('load').addEventListener('click', () => {
  const src = $('src').value.trim();
  if (!src) return;
  history.replaceState(null, '', `?src=${encodeURIComponent(src)}`);
  start(src);
});
if ($('src').value) start($('src').value);
setInterval(() => {
  const v = $('video');
  $('now').textContent = v.currentTime ? `t=${v.currentTime.toFixed(1)} s` : '';
}, 500);
