/**
 * The layers of lib/: every folder (and top-level file) with its role and the lib/ folders it may
 * import. One table, read by ESLint (eslint.config.js, rule `layers/may-import`) and drawn into
 * docs/architecture.md by `npm run graph`, so the rules and the document cannot disagree.
 * A folder missing here is a lint error; so is an import of a folder not in its `mayImport`.
 */

/** The pure format modules: no I/O, no storage, no HTTP. */
export const PURE = ['xml', 'hls', 'dash', 'ads', 'scte35', 'id3'];
/** What every domain may lean on: errors, logging, metrics, configuration, the stop order, the framework. */
const BASE = ['errors', 'log', 'metrics', 'config', 'lifecycle', 'http'];

export const LAYERS = {
  errors: { role: 'domain errors (not found, conflict, invalid, unavailable)', mayImport: [] },
  paths: { role: 'where the repository and its data folders are', mayImport: [] },
  log: { role: 'structured logging (pino)', mayImport: [] },
  metrics: { role: 'the Prometheus text registry (counters, gauges, histograms) every part reports to', mayImport: [] },
  config: { role: 'configuration: defaults, file, environment, validation', mayImport: ['paths'] },
  lifecycle: { role: 'stop order: each part registers its stop, reversed on shutdown', mayImport: ['log'] },
  http: {
    role: 'the framework: uWS server (health, readiness, the /metrics answer, drain), management router, auth, the problem registry and renderer, validation, rate limits',
    mayImport: ['errors', 'config', 'log', 'metrics'],
  },
  xml: {
    role: 'pure: the one XML door (xmldom behind size, depth and DOCTYPE guards), its XmlError, DOM helpers',
    mayImport: [],
  },
  hls: {
    role: 'pure: the HLS readers (lines, master, media, URI resolution, target duration), rewriting and trimming, break placement',
    mayImport: [],
  },
  dash: {
    role: 'pure: the MPD reader, tag scanner and ISO-duration parser, MPD rewriting and trimming',
    mayImport: ['hls', 'xml'],
  },
  ads: {
    role: 'pure: VAST/VMAP reading and writing, ad requests and targeting, beacon URLs',
    mayImport: ['xml', 'errors'],
  },
  scte35: { role: 'pure: SCTE-35 decoding, encoding and cue classification', mayImport: ['hls'] },
  id3: { role: 'pure: ID3v2 in TS, packed audio, emsg and MPD events', mayImport: ['xml', 'dash'] },
  store: {
    role: 'Postgres (postgres.js, migrations, embedded default), the state store (memory or Redis), the Postgres error mapping, which Postgres/Redis errors mean a service is down',
    mayImport: ['errors', 'config', 'log', 'paths'],
  },
  outbound: {
    role: 'the one outbound policy and client every fetch of the service goes through',
    mayImport: ['http', 'log', 'metrics', 'errors'],
  },
  streams: { role: 'the stream model and the event registry', mayImport: [...BASE, 'store'] },
  beacons: {
    role: 'the de-duplicating beacon forwarder, the beacon signing key and the bad-beacon problem',
    mayImport: [...BASE, 'ads', 'outbound', 'store'],
  },
  brand: { role: 'brand-recognition rules and the matcher', mayImport: [...BASE, 'store'] },
  catalog: { role: 'MRSS push and pull, feed configurations, the catalog', mayImport: [...BASE, 'outbound', 'store'] },
  delivery: {
    role: 'manifest delivery shared by the DAI proxy and the squeezeback flow: the lean upstream client, fetch and render, collapsing micro-cache, body slabs',
    mayImport: [...BASE, 'hls', 'dash'],
  },
  dai: {
    role: 'the DAI hot path: /dai/manifest/* and /dai/adproxy over the shared manifest delivery',
    mayImport: [...BASE, ...PURE, 'delivery', 'streams', 'brand', 'outbound'],
  },
  squeeze: {
    role: 'squeeze brand/event configuration, configured ads, the ad-break lifecycle (service, decisions, worker, board, transcoder client, player endpoints), the SCTE-35 cue monitor',
    mayImport: [...BASE, ...PURE, 'store', 'outbound', 'streams', 'beacons', 'delivery'],
  },
  squeezeback: {
    role: 'the squeezeback player flow: /squeezeback/{asset}/… through the shared manifest fetch',
    mayImport: [...BASE, 'hls', 'ads', 'delivery', 'streams', 'brand', 'store', 'outbound'],
  },
  stitch: {
    role: 'server-side stitching: HLS and DASH stitchers, the flow, the stitched-manifest cache and endpoints',
    mayImport: [...BASE, ...PURE, 'catalog', 'brand', 'outbound', 'store'],
  },
  conditioning: {
    role: "ad conditioning: MP4 creatives transcoded to the content's ladder by leased jobs, for stitching",
    mayImport: [...BASE, ...PURE, 'stitch', 'store', 'outbound', 'transcoder'],
  },
  inspection: {
    role: 'ID3 inspection jobs: pod finding in HLS and DASH, leased workers, the API',
    mayImport: [...BASE, ...PURE, 'outbound', 'store', 'streams'],
  },
  transcoder: {
    role: 'the reference transcoder (its own process): ffmpeg composition, ID3 injection, object store',
    mayImport: [...BASE, 'id3', 'scte35', 'outbound', 'squeeze'],
  },
  ui: {
    role: 'the operator and player pages, read once at start-up and answered from memory under /ui/',
    mayImport: ['http', 'log'],
  },
  sim: {
    role: 'simulated collaborators (DAI host, ad server, transcoder, feed host, live origins) for tests, bench and the demo',
    mayImport: ['*'],
  },
  supervisor: { role: 'process supervision (WORKERS)', mayImport: ['config', 'http', 'log', 'store'] },
  app: { role: 'the composition root: builds every part once and wires them', mayImport: ['*'] },
};

/** lib/a/b.ts → "a"; lib/app.ts → "app". */
export function layerOf(relativeToLib) {
  return relativeToLib.split(/[\\/]/)[0].replace(/\.(ts|js)$/, '');
}

export function mayImport(from, to) {
  const layer = LAYERS[from];
  if (!layer) return false;
  return from === to || layer.mayImport.includes('*') || layer.mayImport.includes(to);
}
