/**
 * The OpenAPI contract (issue 25, deliverable 8): the document the service serves passes a standard
 * OpenAPI 3.1 validator (@seriousme/openapi-schema-validator: the OpenAPI Initiative's 3.1 schema
 * and $ref resolution), and every route, management and
 * player-facing, is driven with good and bad requests; each actual answer (status, content type,
 * body, required headers) must be one the document describes, or the test fails. Every answer
 * carries X-Request-Id and every problem body the same request_id; a known path with a wrong
 * method is 405 with Allow. Real Postgres; the DAI host is the simulator.
 */
import t, { type Test } from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { ValidateFunction } from 'ajv';
import { call, type JsonResponse } from '../helpers/http.js';
import { fixture } from '../helpers/fixtures.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { StitchStore } from '../../lib/stitch/store.js';
import { beaconUrl } from '../../lib/ads/beacon.js';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

type Media = Record<string, { schema: object }>;
interface Response {
  content?: Media;
  headers?: Record<string, { required?: boolean }>;
}
interface Doc {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, Response> }>>;
  components: object;
}
interface Call {
  /** The operation: its path template in the document and its method. */
  op: string;
  url: string;
  token?: boolean;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
  /** The status this call is meant to reach (the contract check holds for whatever comes back). */
  expect?: number;
  /** A GET not repeated as HEAD (one whose second asking answers differently, e.g. a one-off stream). */
  noHead?: boolean;
}

const TOKEN = 'push-token-0123456789abcdefghij';
const BEACON_SECRET = 'beacon-secret-for-the-contract-test';
const MRSS = fixture('mrss/rss-parser/guardian.rss');

t.test('OpenAPI contract', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const dai = await new DaiHostSim().start();
  t.teardown(() => dai.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: dai.url,
    beaconSecret: BEACON_SECRET,
  });
  const jwt = await token(service);
  const res = await call(service.url, 'GET', '/api/v1/openapi.json');
  t.equal(res.status, 200);
  const doc = res.body as Doc;

  t.test('the document passes a standard OpenAPI 3.1 validator', async (t) => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    t.equal(validator.version, '3.1', 'read as OpenAPI 3.1');
    t.ok(result.valid, 'valid OpenAPI 3.1', { errors: String(JSON.stringify(result.errors)).slice(0, 2000) });
    // The validator is not a no-op: a parameter in no place OpenAPI knows fails it.
    const broken = structuredClone(doc) as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    broken.paths['/vast']!['get']!['parameters'] = [{ name: 'x', in: 'nowhere', schema: {} }];
    t.notOk((await new Validator().validate(broken)).valid, 'a broken document fails it');
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    t.equal(new Set(ids).size, ids.length, 'operationIds are unique (client generators name methods by them)');
    t.ok(ids.every(Boolean), 'every operation has an operationId');
    // Every $ref names something in the document.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const pointer = ref.slice(8, -1).replace(/^#\//, '').split('/');
      let at: unknown = doc;
      for (const p of pointer) at = (at as Record<string, unknown> | undefined)?.[p];
      t.ok(at, `${ref} resolves`);
    }
    // A self-check of the contract check: a document that lost the 405 answers fails validation of one.
    t.ok(doc.paths['/vast']!['get']!.responses['405'], '405 is described');
    const stitchOp = doc.paths[`/${service.config.stitchPath}/{protocol}/stream/{stream_id}/asset/{asset_id}`]![
      'post'
    ] as unknown as { requestBody: { required: boolean } };
    t.equal(stitchOp.requestBody.required, false, 'an optional body is marked optional');
    const push = doc.paths['/mrssfeed/{brand_name}']!['post'] as unknown as {
      parameters: Array<{ name: string; in: string; required: boolean }>;
    };
    t.ok(
      push.parameters.some((p) => p.in === 'header' && p.name === 'X-Service-Mrss-Token' && p.required),
      'the push token is a required header parameter',
    );
    t.ok(doc.paths['/api/v1/global-config/{name}/pull']!['post']!.responses['202'], 'the pull answers 202');
  });

  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  const validators = new Map<object, ValidateFunction>();
  const validatorOf = (schema: object) => {
    let v = validators.get(schema);
    if (!v) validators.set(schema, (v = ajv.compile({ ...schema, components: doc.components })));
    return v;
  };
  const driven = new Set<string>();

  /** What of an answer the document does not describe (empty: the answer is in the contract). */
  const undescribed = (d: Doc, method: string, tpl: string, r: JsonResponse): string[] => {
    const out: string[] = [];
    if (!r.headers['x-request-id']) out.push('no X-Request-Id');
    const op = d.paths[tpl]?.[method.toLowerCase()];
    if (!op) return [...out, `${method} ${tpl} is not in the document`];
    const described = op.responses[String(r.status)];
    if (!described) return [...out, `status ${r.status} is not in the document`];
    const type = String(r.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (!described.content) {
      if (method !== 'HEAD' && r.text !== '') out.push('a body where the document describes none');
    } else if (method !== 'HEAD') {
      const media = described.content[type];
      if (!media)
        out.push(`content type ${type || '(none)'} is not documented (${Object.keys(described.content).join(', ')})`);
      else if (type.endsWith('json')) {
        const v = validatorOf(media.schema);
        if (!v(r.body)) out.push(`the body does not match the schema: ${JSON.stringify(v.errors?.slice(0, 3))}`);
      }
    }
    for (const [name, h] of Object.entries(described.headers ?? {}))
      if (h.required && !r.headers[name.toLowerCase()]) out.push(`no ${name} header`);
    if (type === 'application/problem+json' && method !== 'HEAD' && r.body?.request_id !== r.headers['x-request-id'])
      out.push('the problem body has not the request_id');
    return out;
  };

  /** One request, and the contract check of its answer; returns the answer. */
  const drive = async (t: Test, c: Call): Promise<JsonResponse> => {
    const [method, tpl] = c.op.split(' ') as [string, string];
    const r = await call(service.url, method, c.url, {
      token: c.token === false ? undefined : jwt,
      json: c.json,
      body: c.body,
      headers: c.headers,
    });
    driven.add(c.op);
    const label = `${method} ${c.url.slice(0, 80)} → ${r.status}`;
    if (c.expect !== undefined)
      t.equal(r.status, c.expect, `${label}: the status meant`, { body: r.text.slice(0, 300) });
    t.same(undescribed(doc, method, tpl, r), [], `${label}: described by the document`, { body: r.text.slice(0, 300) });
    // Every GET the document also lists as HEAD is asked both ways: the same status, no body.
    if (method === 'GET' && doc.paths[tpl]?.['head'] && !c.noHead) {
      const h = await call(service.url, 'HEAD', c.url, {
        token: c.token === false ? undefined : jwt,
        headers: c.headers,
      });
      driven.add(`HEAD ${tpl}`);
      if (c.expect !== undefined) t.equal(h.status, c.expect, `HEAD ${c.url.slice(0, 80)}: the status of its GET`);
      t.same(undescribed(doc, 'HEAD', tpl, h), [], `HEAD ${c.url.slice(0, 80)} → ${h.status}: described`);
    }
    return r;
  };

  t.test('the check fails on what the document does not describe', async (t) => {
    const r = await call(service.url, 'GET', '/vast');
    t.same(undescribed(doc, 'GET', '/vast', r), [], 'the real document describes a 400 from /vast');
    const without400 = structuredClone(doc);
    delete without400.paths['/vast']!['get']!.responses['400'];
    t.match(
      undescribed(without400, 'GET', '/vast', r),
      ['status 400 is not in the document'],
      'an undocumented status fails',
    );
    t.match(
      undescribed(doc, 'GET', '/vast', { ...r, headers: { ...r.headers, 'content-type': 'text/html' } }),
      [/content type text\/html/],
      'an undocumented content type fails',
    );
    t.match(
      undescribed(doc, 'GET', '/vast', { ...r, body: { ...r.body, status: 'four hundred' } }),
      [/does not match the schema/],
      'a body off the schema fails',
    );
    t.match(
      undescribed(doc, 'GET', '/vast', { ...r, headers: { ...r.headers, 'x-request-id': undefined } }),
      ['no X-Request-Id', /request_id/],
      'a missing request id fails',
    );
    t.match(undescribed(doc, 'PATCH', '/vast', r), [/not in the document/], 'an undocumented operation fails');
  });

  const driveAll = async (t: Test, calls: Call[]) => {
    for (const c of calls) await drive(t, c);
  };

  t.test('management routes', async (t) => {
    const br = await drive(t, {
      op: 'POST /api/v1/brand-recognition',
      url: '/api/v1/brand-recognition',
      json: { brand_name: 'acme', match_type: 'hostname', match_value: 'tv.acme.example' },
      expect: 201,
    });
    const ruleId = br.body.id as number;
    await driveAll(t, [
      {
        op: 'POST /api/v1/brand-recognition',
        url: '/api/v1/brand-recognition',
        json: { brand_name: 'acme', match_type: 'nope', match_value: 'x' },
        expect: 400,
      },
      {
        op: 'POST /api/v1/brand-recognition',
        url: '/api/v1/brand-recognition',
        body: '<x/>',
        headers: { 'content-type': 'application/xml' },
        expect: 415,
      },
      { op: 'POST /api/v1/brand-recognition', url: '/api/v1/brand-recognition', token: false, json: {}, expect: 401 },
      { op: 'GET /api/v1/brand-recognition', url: '/api/v1/brand-recognition?page_size=2', expect: 200 },
      { op: 'GET /api/v1/brand-recognition', url: '/api/v1/brand-recognition?page_size=501', expect: 400 },
      { op: 'GET /api/v1/brand-recognition/{id}', url: `/api/v1/brand-recognition/${ruleId}`, expect: 200 },
      { op: 'GET /api/v1/brand-recognition/{id}', url: '/api/v1/brand-recognition/999999', expect: 404 },
      {
        op: 'PUT /api/v1/brand-recognition/{id}',
        url: `/api/v1/brand-recognition/${ruleId}`,
        json: { brand_name: 'acme', match_type: 'hostname', match_value: '*.acme.example' },
        expect: 200,
      },
      {
        op: 'POST /api/v1/brand-recognition/resolve',
        url: '/api/v1/brand-recognition/resolve',
        json: { hostname: 'tv.acme.example' },
        expect: 200,
      },
      {
        op: 'POST /api/v1/brand-recognition/resolve',
        url: '/api/v1/brand-recognition/resolve',
        json: { hostname: 'other.example' },
        expect: 404,
      },
      { op: 'PUT /api/v1/brand-recognition/{id}', url: '/api/v1/brand-recognition/abc', json: {}, expect: 400 },
    ]);

    await driveAll(t, [
      {
        op: 'PUT /api/v1/squeeze-brand-config',
        url: '/api/v1/squeeze-brand-config',
        json: { brand_id: 'acme' },
        expect: 200,
      },
      {
        op: 'PUT /api/v1/squeeze-brand-config',
        url: '/api/v1/squeeze-brand-config',
        json: { brand_id: 'acme', sqz_ratios: { content_box: 7 } },
        expect: 400,
      },
      { op: 'GET /api/v1/squeeze-brand-config/{brand_id}', url: '/api/v1/squeeze-brand-config/acme', expect: 200 },
      { op: 'GET /api/v1/squeeze-brand-config/{brand_id}', url: '/api/v1/squeeze-brand-config/nope', expect: 404 },
    ]);
    const ev = await drive(t, {
      op: 'PUT /api/v1/squeeze-event-config',
      url: '/api/v1/squeeze-event-config',
      json: {
        asset_id: 'AK1',
        source_uri: 'https://origin.example/live/master.m3u8',
        brand_config_id: 'acme',
        WindowsSegs: 0,
      },
      expect: 200,
    });
    const eventId = ev.body.id as number;
    await driveAll(t, [
      {
        op: 'PUT /api/v1/squeeze-event-config',
        url: '/api/v1/squeeze-event-config',
        json: { asset_id: 'AK2', source_uri: 'x', brand_config_id: 'acme' },
        expect: 400,
      },
      { op: 'GET /api/v1/squeeze-event-config', url: '/api/v1/squeeze-event-config?asset_id=AK1', expect: 200 },
      { op: 'GET /api/v1/squeeze-event-config', url: '/api/v1/squeeze-event-config', expect: 400 },
      { op: 'GET /api/v1/squeeze-event-config/{id}', url: `/api/v1/squeeze-event-config/${eventId}`, expect: 200 },
      { op: 'GET /api/v1/squeeze-event-config/{id}', url: '/api/v1/squeeze-event-config/999999', expect: 404 },
      { op: 'GET /api/v1/squeeze-events', url: '/api/v1/squeeze-events', expect: 200 },
    ]);

    const ad = await drive(t, {
      op: 'PUT /api/v1/squeeze-configured-ad',
      url: '/api/v1/squeeze-configured-ad',
      json: { event_id: eventId, ad_uri: 'https://ads.example/a.mp4', duration: 10, abid: 'a1', is_curated: true },
      expect: 200,
    });
    await driveAll(t, [
      {
        op: 'PUT /api/v1/squeeze-configured-ad',
        url: '/api/v1/squeeze-configured-ad',
        json: { event_id: eventId, ad_uri: 'https://ads.example/a.mp4', duration: 10, abid: 'a1' },
        expect: 409,
      },
      {
        op: 'GET /api/v1/squeeze-configured-ad',
        url: `/api/v1/squeeze-configured-ad?event_id=${eventId}`,
        expect: 200,
      },
      {
        op: 'POST /api/v1/squeeze-configured-ad',
        url: '/api/v1/squeeze-configured-ad',
        json: { id: ad.body.id, ad_duration: 15 },
        expect: 200,
      },
      {
        op: 'POST /api/v1/squeeze-configured-ad',
        url: '/api/v1/squeeze-configured-ad',
        json: { id: 999999, duration: 15 },
        expect: 404,
      },
      {
        op: 'DELETE /api/v1/squeeze-configured-ad',
        url: '/api/v1/squeeze-configured-ad',
        json: { id: 999999 },
        expect: 404,
      },
      {
        op: 'DELETE /api/v1/squeeze-configured-ad',
        url: '/api/v1/squeeze-configured-ad',
        json: { id: ad.body.id },
        expect: 200,
      },
    ]);

    await driveAll(t, [
      {
        op: 'POST /api/v1/squeeze-ad-break',
        url: '/api/v1/squeeze-ad-break',
        json: { event_id: 999999, break_duration: 30 },
      },
      {
        op: 'POST /api/v1/squeeze-ad-break',
        url: '/api/v1/squeeze-ad-break',
        json: { break_duration: -1 },
        expect: 400,
      },
      {
        op: 'PUT /api/v1/squeeze-ad-break',
        url: '/api/v1/squeeze-ad-break',
        json: { event_id: eventId, break_duration: 30 },
      },
      { op: 'GET /api/v1/squeeze-ad-break', url: `/api/v1/squeeze-ad-break?event_id=${eventId}`, expect: 200 },
      {
        op: 'GET /api/v1/squeeze-ad-break/{break_id}',
        url: '/api/v1/squeeze-ad-break/00000000-0000-0000-0000-000000000000',
        expect: 404,
      },
      {
        op: 'POST /api/v1/squeeze-ad-break/{break_id}/extend',
        url: '/api/v1/squeeze-ad-break/00000000-0000-0000-0000-000000000000/extend',
        json: { additional_sec: 10 },
        expect: 404,
      },
      {
        op: 'DELETE /api/v1/squeeze-ad-break/{break_id}',
        url: '/api/v1/squeeze-ad-break/00000000-0000-0000-0000-000000000000',
        expect: 404,
      },
      {
        op: 'POST /api/v1/scte35/decode',
        url: '/api/v1/scte35/decode',
        json: { payload: '/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoh' },
        expect: 200,
      },
      { op: 'POST /api/v1/scte35/decode', url: '/api/v1/scte35/decode', json: { payload: 'AAAA' }, expect: 400 },
      { op: 'GET /api/v1/streams', url: `/api/v1/streams?event_id=${eventId}`, expect: 200 },
      { op: 'GET /api/v1/streams', url: '/api/v1/streams', expect: 400 },
      { op: 'GET /api/v1/streams/{stream_id}', url: '/api/v1/streams/nope', expect: 404 },
      { op: 'POST /api/v1/id3-tag-inspect', url: '/api/v1/id3-tag-inspect', json: { stream_id: 'unknown:LOC' } },
      { op: 'POST /api/v1/id3-tag-inspect', url: '/api/v1/id3-tag-inspect', json: {}, expect: 400 },
      { op: 'GET /api/v1/id3-tag-inspect/{stream_id}', url: '/api/v1/id3-tag-inspect/unknown:LOC', expect: 404 },
      { op: 'GET /api/v1/ad-creatives', url: '/api/v1/ad-creatives' },
      { op: 'GET /api/v1/ad-creatives', url: '/api/v1/ad-creatives?state=bogus', expect: 400 },
    ]);

    const feed = {
      brand_name: 'acme',
      feed_name: 'acme-feed',
      feed_uri: 'http://127.0.0.1:9/feed.rss',
      pagination_params: {},
    };
    await driveAll(t, [
      {
        op: 'PUT /api/v1/brand-tokens/{brand_name}',
        url: '/api/v1/brand-tokens/acme',
        json: { mrss_token: TOKEN },
        expect: 204,
      },
      {
        op: 'PUT /api/v1/brand-tokens/{brand_name}',
        url: '/api/v1/brand-tokens/acme',
        json: { mrss_token: 'short' },
        expect: 400,
      },
      {
        op: 'POST /mrssfeed/{brand_name}',
        url: '/mrssfeed/acme',
        body: MRSS,
        headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN },
        expect: 200,
      },
      {
        op: 'POST /mrssfeed/{brand_name}',
        url: '/mrssfeed/acme',
        body: MRSS,
        headers: { 'content-type': 'application/xml', 'x-service-mrss-token': 'wrong-token-0123456789abcdef' },
        expect: 401,
      },
      {
        op: 'POST /mrssfeed/{brand_name}',
        url: '/mrssfeed/acme',
        body: '<rss><channel><item>',
        headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN },
        expect: 400,
      },
      { op: 'GET /api/v1/catalog', url: '/api/v1/catalog?brand_name=acme&page_size=3', expect: 200 },
      { op: 'GET /api/v1/catalog/{brand_name}/{guid}', url: '/api/v1/catalog/acme/nope', expect: 404 },
      {
        op: 'POST /api/v1/global-config',
        url: '/api/v1/global-config',
        json: { name: 'acme config', jsonb_value: feed },
        expect: 201,
      },
      { op: 'POST /api/v1/global-config', url: '/api/v1/global-config', json: feed, expect: 409 },
      { op: 'POST /api/v1/global', url: '/api/v1/global', json: { ...feed, feed_uri: 'ftp://x' }, expect: 400 },
      { op: 'GET /api/v1/global-config', url: '/api/v1/global-config', expect: 200 },
      { op: 'GET /api/v1/global', url: '/api/v1/global?page=0&page_size=1', expect: 200 },
      {
        op: 'GET /api/v1/global-config/{name}',
        url: `/api/v1/global-config/${encodeURIComponent('acme config')}`,
        expect: 200,
      },
      { op: 'GET /api/v1/global/{name}', url: '/api/v1/global/nope', expect: 404 },
      { op: 'POST /api/v1/global-config/{name}/pull', url: '/api/v1/global-config/acme-feed/pull' },
      { op: 'POST /api/v1/global/{name}/pull', url: '/api/v1/global/nope/pull', expect: 404 },
      {
        op: 'PUT /api/v1/global-config/{name}',
        url: '/api/v1/global-config/acme-feed',
        json: { ...feed, pull_frequency_sec: 60 },
        expect: 200,
      },
      { op: 'PUT /api/v1/global/{name}', url: '/api/v1/global/nope', json: feed, expect: 404 },
      { op: 'DELETE /api/v1/global-config/{name}', url: '/api/v1/global-config/acme-feed', expect: 200 },
      { op: 'DELETE /api/v1/global/{name}', url: '/api/v1/global/acme-feed', expect: 404 },
    ]);
    const items = await call(service.url, 'GET', '/api/v1/catalog?brand_name=acme&page_size=1', { token: jwt });
    if (items.body.results[0])
      await drive(t, {
        op: 'GET /api/v1/catalog/{brand_name}/{guid}',
        url: `/api/v1/catalog/acme/${encodeURIComponent(items.body.results[0].guid)}`,
        expect: 200,
      });

    const stitch = `/${service.config.stitchPath}`;
    await driveAll(t, [
      {
        op: `POST ${stitch}/{protocol}/stream/{stream_id}/asset/{asset_id}`,
        url: `${stitch}/hls/stream/s1/asset/a1`,
        token: false,
        headers: { 'x-forwarded-host': 'tv.acme.example' },
      },
      {
        op: `POST ${stitch}/{protocol}/stream/{stream_id}/asset/{asset_id}`,
        url: `${stitch}/hls/stream/s1/asset/a1`,
        token: false,
        expect: 400,
      },
      {
        op: `POST ${stitch}/{protocol}/stream/{stream_id}/asset/{asset_id}`,
        url: `${stitch}/hls/stream/s1/asset/a1`,
        token: false,
        json: { targeting: 'x' },
        expect: 400,
      },
      { op: 'DELETE /api/v1/brand-recognition/{id}', url: `/api/v1/brand-recognition/${ruleId}`, expect: 200 },
      { op: 'DELETE /api/v1/brand-recognition/{id}', url: `/api/v1/brand-recognition/${ruleId}`, expect: 404 },
      { op: 'GET /api/v1/openapi.json', url: '/api/v1/openapi.json', token: false, expect: 200 },
    ]);
  });

  t.test('a wrong method on a known path is 405 with Allow, everywhere', async (t) => {
    const stitch = `/${service.config.stitchPath}`;
    const wrong: Array<[op: string, url: string]> = [
      ['PATCH /api/v1/brand-recognition', '/api/v1/brand-recognition'],
      ['PATCH /api/v1/global-config/{name}', '/api/v1/global-config/x'],
      ['PUT /dai/manifest/{path}', '/dai/manifest/linear/event/AK1/master.m3u8'],
      ['POST /dai/adproxy', '/dai/adproxy'],
      ['DELETE /vast', '/vast'],
      ['PUT /beacon', '/beacon'],
      ['POST /squeezeback/{asset_id}/master.m3u8', '/squeezeback/AK1/master.m3u8'],
      ['DELETE /squeezeback/{asset_id}/{stream_id}/{path}', '/squeezeback/AK1/123456789/v.m3u8'],
      [`POST ${stitch}/cache/{id}/{file}`, `${stitch}/cache/abc/master.m3u8`],
      [`POST ${stitch}/filler.vtt`, `${stitch}/filler.vtt`],
      ['POST /healthz', '/healthz'],
      ['POST /readyz', '/readyz'],
      ['POST /metrics', '/metrics'],
      ['POST /ui/{file}', '/ui/index.html'],
      ['POST /ui', '/ui'],
      [`DELETE ${stitch}/creatives/{key}/{file}`, `${stitch}/creatives/abc/master.m3u8`],
      // a literal segment wins over a parameter: `resolve` is a POST-only path, not a bad rule id
      ['GET /api/v1/brand-recognition/resolve', '/api/v1/brand-recognition/resolve'],
    ];
    for (const [op, url] of wrong) {
      const [method, tpl] = op.split(' ') as [string, string];
      const r = await call(service.url, method, url, { token: jwt });
      t.equal(r.status, 405, `${op}: 405`);
      t.ok(r.headers['allow'], `${op}: Allow (${String(r.headers['allow'])})`);
      t.equal(r.headers['content-type'], 'application/problem+json', `${op}: a problem`);
      t.equal(r.body?.request_id, r.headers['x-request-id'], `${op}: request_id`);
      // The document describes 405 on the path's own operations.
      const ops = doc.paths[tpl] ?? {};
      t.ok(
        Object.values(ops).some((o) => o.responses['405']),
        `${tpl}: 405 documented`,
      );
    }
    const incoming = await call(service.url, 'GET', '/vast', { headers: { 'x-request-id': 'player-abc.1' } });
    t.equal(
      incoming.headers['x-request-id'],
      'player-abc.1',
      'an incoming request id is kept on the player-facing path',
    );
  });

  t.test('player-facing routes', async (t) => {
    const stitch = `/${service.config.stitchPath}`;
    const eventId = (await call(service.url, 'GET', '/api/v1/squeeze-event-config?asset_id=AK1', { token: jwt })).body
      .id as number;
    await driveAll(t, [
      { op: 'GET /dai/adproxy', url: '/dai/adproxy?stream_id=c1:LOC&asset_key=AK1', token: false, expect: 200 },
      {
        op: 'GET /dai/manifest/{path}',
        url: '/dai/manifest/linear/v1/hls/event/AK1/stream/c1:LOC/master.m3u8',
        token: false,
      },
      {
        op: 'HEAD /dai/manifest/{path}',
        url: '/dai/manifest/linear/v1/hls/event/AK1/stream/c1:LOC/master.m3u8',
        token: false,
      },
      {
        op: 'GET /dai/manifest/{path}',
        url: '/dai/manifest/linear/v1/hls/event/AK1/stream/c1:LOC/nothing-here.m3u8',
        token: false,
      },
      { op: 'GET /vast', url: '/vast?stream_id=c1:LOC', token: false, expect: 200 },
      { op: 'GET /vast', url: '/vast', token: false, expect: 400 },
      { op: 'HEAD /vast', url: '/vast?stream_id=c1:LOC', token: false, expect: 200 },
      // the stream the ad tag registered, as the management API answers it
      { op: 'GET /api/v1/streams/{stream_id}', url: '/api/v1/streams/c1:LOC', expect: 200 },
      { op: 'GET /api/v1/streams', url: `/api/v1/streams?event_id=${eventId}`, expect: 200 },
      { op: 'GET /beacon', url: '/beacon?u=https%3A%2F%2Fads.example%2Fi', token: false, expect: 400 },
      { op: 'HEAD /beacon', url: '/beacon', token: false, expect: 400 },
      {
        op: 'POST /beacon',
        url: '/beacon',
        token: false,
        body: 'x',
        headers: { 'content-type': 'text/plain' },
        expect: 400,
      },
      {
        op: 'GET /squeezeback/{asset_id}/master.m3u8',
        url: '/squeezeback/NOPE/master.m3u8',
        token: false,
        expect: 404,
      },
      {
        op: 'HEAD /squeezeback/{asset_id}/master.m3u8',
        url: '/squeezeback/NOPE/master.m3u8',
        token: false,
        expect: 404,
      },
      { op: 'GET /squeezeback/{asset_id}/{stream_id}/{path}', url: '/squeezeback/AK1/123456789/v.m3u8', token: false },
      {
        op: 'HEAD /squeezeback/{asset_id}/{stream_id}/{path}',
        url: '/squeezeback/AK1/123456789/seg.ts',
        token: false,
        expect: 400,
      },
      {
        op: `GET ${stitch}/cache/{id}/{file}`,
        url: `${stitch}/cache/0123456789abcdef0123/master.m3u8`,
        token: false,
        expect: 404,
      },
      { op: `HEAD ${stitch}/cache/{id}/{file}`, url: `${stitch}/cache/x/y`, token: false, expect: 404 },
      { op: `GET ${stitch}/filler.vtt`, url: `${stitch}/filler.vtt`, token: false, expect: 200 },
      { op: `HEAD ${stitch}/filler.vtt`, url: `${stitch}/filler.vtt`, token: false, expect: 200 },
      { op: 'GET /healthz', url: '/healthz', token: false, expect: 200 },
      { op: 'GET /readyz', url: '/readyz', token: false, expect: 200 },
      { op: 'GET /metrics', url: '/metrics', token: false, expect: 200 },
      { op: 'GET /ui', url: '/ui', token: false, expect: 308 },
      { op: 'GET /ui/{file}', url: '/ui/index.html', token: false, expect: 200 },
      { op: 'GET /ui/{file}', url: '/ui/nope.html', token: false, expect: 404 },
      {
        op: `GET ${stitch}/creatives/{key}/{file}`,
        url: `${stitch}/creatives/abc/master.m3u8`,
        token: false,
        expect: 404,
      },
    ]);
  });

  t.test('conditional requests (304) and CORS preflights (204)', async (t) => {
    const stitch = `/${service.config.stitchPath}`;
    /** A GET, then the same GET with its ETag: 304 (and HEAD alike), described by the document. */
    const revalidate = async (op: string, url: string) => {
      const first = await drive(t, { op, url, token: false, expect: 200, noHead: true });
      const etag = String(first.headers['etag'] ?? '');
      t.ok(etag, `${url}: an ETag`);
      await drive(t, { op, url, token: false, headers: { 'if-none-match': etag }, expect: 304 });
    };
    await revalidate('GET /dai/manifest/{path}', '/dai/manifest/linear/v1/hls/event/AK1/stream/c1:LOC/master.m3u8');
    await revalidate('GET /ui/{file}', '/ui/index.html');
    // The hot path's errors: an upstream failure is a 502 problem, its request id in the body also
    // when the second asking is answered from the cached problem (the id spliced in per answer).
    dai.mode = 'error';
    for (const id of ['edge-1', 'edge-2']) {
      const r = await drive(t, {
        op: 'GET /dai/manifest/{path}',
        url: '/dai/manifest/linear/v1/hls/event/AK1/stream/c9:LOC/variant/720p.m3u8',
        token: false,
        headers: { 'x-request-id': id },
        expect: 502,
        noHead: true,
      });
      t.equal(r.body?.request_id, id, `the problem names request ${id}`);
    }
    dai.mode = 'ok';
    // A squeezeback stream on the simulated origin: its variant revalidates.
    await call(service.url, 'PUT', '/api/v1/squeeze-event-config', {
      token: jwt,
      json: { asset_id: 'AK3', source_uri: `${dai.url}/source/master.m3u8`, brand_config_id: 'acme' },
    });
    const master = await drive(t, {
      op: 'GET /squeezeback/{asset_id}/master.m3u8',
      url: '/squeezeback/AK3/master.m3u8',
      token: false,
      expect: 200,
      noHead: true,
    });
    const variant = master.text.split('\n').find((l) => l.endsWith('/variant/720p.m3u8'));
    t.ok(variant, 'the master names the stream’s variant');
    await revalidate('GET /squeezeback/{asset_id}/{stream_id}/{path}', `/squeezeback/AK3/${variant}`);
    const preflights: Array<[op: string, url: string]> = [
      ['OPTIONS /dai/manifest/{path}', '/dai/manifest/linear/v1/hls/event/AK1/stream/c1:LOC/master.m3u8'],
      ['OPTIONS /vast', '/vast'],
      ['OPTIONS /beacon', '/beacon'],
      ['OPTIONS /squeezeback/{asset_id}/master.m3u8', '/squeezeback/AK3/master.m3u8'],
      ['OPTIONS /squeezeback/{asset_id}/{stream_id}/{path}', `/squeezeback/AK3/${variant}`],
      [`OPTIONS ${stitch}/cache/{id}/{file}`, `${stitch}/cache/0123456789abcdef0123/master.m3u8`],
      [`OPTIONS ${stitch}/filler.vtt`, `${stitch}/filler.vtt`],
      [`OPTIONS ${stitch}/creatives/{key}/{file}`, `${stitch}/creatives/abc/master.m3u8`],
      [`OPTIONS ${stitch}/{protocol}/stream/{stream_id}/asset/{asset_id}`, `${stitch}/hls/stream/s1/asset/a1`],
    ];
    for (const [op, url] of preflights) {
      const r = await drive(t, {
        op,
        url,
        token: false,
        headers: { origin: 'https://player.example', 'access-control-request-method': 'GET' },
        expect: 204,
      });
      t.ok(r.headers['access-control-allow-methods'], `${op}: Access-Control-Allow-Methods`);
    }
  });

  t.test('success answers: a break’s life, the spec’s /global name, an ID3 inspection', async (t) => {
    // A squeezeback stream of AK3 (registered by its master above) and a curated ad: a break can start.
    const ak3 = (await call(service.url, 'GET', '/api/v1/squeeze-event-config?asset_id=AK3', { token: jwt })).body
      .id as number;
    await call(service.url, 'GET', '/squeezeback/AK3/master.m3u8');
    await call(service.url, 'PUT', '/api/v1/squeeze-configured-ad', {
      token: jwt,
      json: { event_id: ak3, ad_uri: 'https://ads.example/c3.mp4', duration: 8, abid: 'c3', is_curated: true },
    });
    const started = await drive(t, {
      op: 'POST /api/v1/squeeze-ad-break',
      url: '/api/v1/squeeze-ad-break',
      json: { event_id: ak3, break_duration: 8 },
      expect: 200,
    });
    const id = String(started.body?.id);
    await driveAll(t, [
      { op: 'GET /api/v1/squeeze-ad-break/{break_id}', url: `/api/v1/squeeze-ad-break/${id}`, expect: 200 },
      {
        op: 'POST /api/v1/squeeze-ad-break/{break_id}/extend',
        url: `/api/v1/squeeze-ad-break/${id}/extend`,
        json: { additional_sec: 4 },
        expect: 200,
      },
      { op: 'DELETE /api/v1/squeeze-ad-break/{break_id}', url: `/api/v1/squeeze-ad-break/${id}`, expect: 200 },
    ]);
    const put = await drive(t, {
      op: 'PUT /api/v1/squeeze-ad-break',
      url: '/api/v1/squeeze-ad-break',
      json: { event_id: ak3, break_duration: 8 },
      expect: 200,
    });
    await call(service.url, 'DELETE', `/api/v1/squeeze-ad-break/${String(put.body?.id)}`, { token: jwt });

    // The prose's name for the feed configurations answers as /global-config does.
    const feed = {
      brand_name: 'acme',
      feed_name: 'acme-alias',
      feed_uri: 'http://127.0.0.1:9/f.rss',
      pagination_params: {},
    };
    await driveAll(t, [
      { op: 'POST /api/v1/global', url: '/api/v1/global', json: feed, expect: 201 },
      { op: 'GET /api/v1/global/{name}', url: '/api/v1/global/acme-alias', expect: 200 },
      { op: 'PUT /api/v1/global/{name}', url: '/api/v1/global/acme-alias', json: feed, expect: 200 },
      { op: 'POST /api/v1/global/{name}/pull', url: '/api/v1/global/acme-alias/pull' },
      { op: 'DELETE /api/v1/global/{name}', url: '/api/v1/global/acme-alias', expect: 200 },
    ]);

    // An inspection of a stream the ad tag registered (its event's source is read): pending, then its state.
    await driveAll(t, [
      {
        op: 'POST /api/v1/id3-tag-inspect',
        url: '/api/v1/id3-tag-inspect',
        json: { stream_id: 'c1:LOC' },
        expect: 200,
      },
      { op: 'GET /api/v1/id3-tag-inspect/{stream_id}', url: '/api/v1/id3-tag-inspect/c1:LOC', expect: 200 },
    ]);
  });

  t.test('success answers: a stitched manifest, a conditioned creative’s file, a signed beacon', async (t) => {
    const stitch = `/${service.config.stitchPath}`;
    // A session as another instance's stitch POST stores it; this one serves its cache URL.
    await new StitchStore(service.stores.sql).put({
      id: 'contractSession012345',
      key: 'contract',
      protocol: 'hls',
      files: {
        'master.m3u8': fixture('hls/eyevinn-hls-splice/hls1/master.m3u8'),
        'v0.m3u8': fixture('hls/eyevinn-hls-splice/hls1/index_0_av.m3u8'),
      },
      response: {},
      expiresAt: Date.now() + 600_000,
    });
    const url = `${stitch}/cache/contractSession012345/v0.m3u8`;
    const first = await drive(t, { op: `GET ${stitch}/cache/{id}/{file}`, url, token: false, expect: 200 });
    await drive(t, {
      op: `GET ${stitch}/cache/{id}/{file}`,
      url,
      token: false,
      headers: { 'if-none-match': String(first.headers['etag']) },
      expect: 304,
    });
    // A conditioned rendition's file where the store keeps it (DATA_DIR/ad-creatives/<key>/).
    const key = 'ab'.repeat(32);
    await mkdir(path.join(service.config.dataDir, 'ad-creatives', key), { recursive: true });
    await writeFile(path.join(service.config.dataDir, 'ad-creatives', key, 'master.m3u8'), '#EXTM3U\n');
    await drive(t, {
      op: `GET ${stitch}/creatives/{key}/{file}`,
      url: `${stitch}/creatives/${key}/master.m3u8`,
      token: false,
      expect: 200,
    });
    // A beacon the service signed (its forward to the unreachable tracker happens after the answer).
    const signed = beaconUrl('', BEACON_SECRET, {
      url: 'http://127.0.0.1:9/impression',
      streamId: 'c1:LOC',
      event: 'impression',
    });
    for (const method of ['GET', 'POST'])
      await drive(t, { op: `${method} /beacon`, url: signed, token: false, expect: 200 });
  });

  t.test('every operation of the document was driven', async (t) => {
    for (const [tpl, ops] of Object.entries(doc.paths))
      for (const method of Object.keys(ops))
        t.ok(driven.has(`${method.toUpperCase()} ${tpl}`), `${method.toUpperCase()} ${tpl} driven`);
  });
});
