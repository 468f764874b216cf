/**
 * The conditioned renditions in an S3-compatible object store (issue 26 item 1: "the reference
 * transcoder's, or any S3-compatible store when configured"): objects `<prefix><key>/<file>` in one
 * bucket, path-style URLs (`<endpoint>/<bucket>/<object>`, which MinIO, Ceph, R2 and AWS all
 * answer), every request signed with SigV4 (./sigv4.ts). ffmpeg still writes into a local scratch
 * folder (./files.ts); publishing uploads the kept files, segments first and manifests last, so a
 * manifest never names a segment not yet stored (and the job's row turns ready only after all of
 * them). Requests go through the outbound policy like every other fetch (lib/outbound): the
 * endpoint is a configured collaborator (S3_ENDPOINT, trusted by name, so an in-cluster MinIO on a
 * private address is reached with private outbound off), and the policy's agent caps the body.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { request, type Dispatcher } from 'undici';
import { CreativeFiles, type RenditionStore } from './files.js';
import { awsEncode, EMPTY_SHA256, sha256Hex, signV4, type SigV4Credentials } from './sigv4.js';

export interface S3Options {
  /** `http(s)://host[:port]`, without the bucket. */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Object name prefix, e.g. `ad-creatives/`. */
  prefix: string;
}

const UPLOADS_AT_ONCE = 4;
const REQUEST_MS = 30_000;
/** What the policy's agent for this store is built with (lib/conditioning/parts.ts). */
export const S3_AGENT = {
  timeoutMs: REQUEST_MS,
  /** The largest object read back (a segment or manifest; renditions of a 2-minute creative are far below). */
  maxResponseSize: 64 * 1024 * 1024,
};

export class S3Error extends Error {
  override name = 'S3Error';
}

export class S3CreativeFiles implements RenditionStore {
  private readonly local: CreativeFiles;
  private readonly origin: URL;
  private readonly cred: SigV4Credentials;
  constructor(
    private readonly opts: S3Options,
    /** Where ffmpeg writes before the upload (DATA_DIR). */
    dataDir: string,
    /** The outbound policy's agent (`policy.agent(S3_AGENT)`): it checks each connection and closes with the policy. */
    private readonly agent: Dispatcher,
  ) {
    this.local = new CreativeFiles(dataDir);
    this.origin = new URL(opts.endpoint);
    this.cred = {
      accessKeyId: opts.accessKeyId,
      secretAccessKey: opts.secretAccessKey,
      region: opts.region,
      service: 's3',
    };
  }

  /** The object name of a file of a key's renditions; undefined for a name that is not ours. */
  file(key: string, name: string): string | undefined {
    return this.local.file(key, name) === undefined ? undefined : `${this.opts.prefix}${key}/${name}`;
  }

  scratch(): Promise<string> {
    return this.local.scratch();
  }

  discard(scratch: string): Promise<void> {
    return this.local.discard(scratch);
  }

  async publish(scratch: string, key: string, keep: (name: string) => boolean): Promise<string[]> {
    const names = (await readdir(scratch)).filter((n) => keep(n) && this.file(key, n) !== undefined).sort();
    const manifest = (n: string) => n.endsWith('.m3u8') || n.endsWith('.mpd');
    const queue = [...names.filter((n) => !manifest(n))];
    const upload = async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift())
        await this.put(this.file(key, n)!, await readFile(path.join(scratch, n)));
    };
    await Promise.all(Array.from({ length: UPLOADS_AT_ONCE }, upload));
    queue.push(...names.filter(manifest));
    await upload();
    await this.local.discard(scratch);
    return names;
  }

  /** A file's bytes; undefined when the store has no such object (another failure throws). */
  async read(key: string, name: string): Promise<Buffer | undefined> {
    const object = this.file(key, name);
    if (!object) return undefined;
    const res = await this.send('GET', object);
    if (res.statusCode === 404) {
      await res.body.dump();
      return undefined;
    }
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw new S3Error(`object store GET answered ${res.statusCode}: ${code(body)}`);
    return body;
  }

  async put(object: string, body: Buffer): Promise<void> {
    const res = await this.send('PUT', object, body);
    const text = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw new S3Error(`object store PUT answered ${res.statusCode}: ${code(text)}`);
  }

  private send(method: 'GET' | 'PUT', object: string, body?: Buffer) {
    const base = this.origin.pathname.replace(/\/+$/, '');
    const p = `${base}/${awsEncode(this.opts.bucket)}/${object.split('/').map(awsEncode).join('/')}`;
    const headers = signV4(
      {
        method,
        host: this.origin.host,
        path: p,
        payloadHash: body ? sha256Hex(body) : EMPTY_SHA256,
        ...(body ? { headers: { 'content-length': String(body.length) } } : {}),
      },
      this.cred,
    );
    return request(new URL(p, this.origin.origin), {
      method,
      headers,
      ...(body ? { body } : {}),
      dispatcher: this.agent,
    });
  }
}

/** The error code of an S3 error document, for the log and the job's error (no more of the body). */
function code(body: Buffer): string {
  return /<Code>([^<]{1,64})<\/Code>/.exec(body.subarray(0, 4096).toString('utf8'))?.[1] ?? 'no error code';
}
