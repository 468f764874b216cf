import { rewritePlaylist, trimText } from '/work/main/dist/lib/hls/index.js';
import { livePlaylist, defaultShape } from '/work/main/dist/lib/sim/live-playlist.js';
const rules = { daiHost: 'https://dai.example.com', proxyBase: 'https://edge.example.net/dai/manifest', contentOrigin: 'https://origin.example.org', playlistUrl: 'https://dai.example.com/linear/hls/event/E/stream/S/variant/720p.m3u8' };
const now = defaultShape.epochMs + 100_000 * 6000;
for (const w of [30, 1200]) {
  const text = livePlaylist('s1', now, { ...defaultShape, windowSegments: w });
  const time = (name, fn) => { for (let i=0;i<2000;i++) fn(); const n = w === 30 ? 20000 : 1000; const t = performance.now(); for (let i=0;i<n;i++) fn(); console.log(w, name, ((performance.now()-t)/n*1000).toFixed(1), 'us'); };
  const out = rewritePlaylist(text, rules).text;
  time('rewrite', () => rewritePlaylist(text, rules));
  time('rewrite+flatten', () => Buffer.from(rewritePlaylist(text, rules).text));
  time('trimText', () => trimText(out, { windowSegments: 10, delaySegments: 2 }));
  time('trimText d only', () => trimText(out, { windowSegments: 0, delaySegments: 2 }));
  time('split only', () => text.split('\n'));
}
