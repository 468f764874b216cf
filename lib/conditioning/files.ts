/**
 * The conditioned renditions' object store: a folder per (creative, profile) key under
 * `<DATA_DIR>/ad-creatives/`, its files named by the transcode. A job writes into a scratch folder
 * and publishes it with one rename, so a reader sees a whole set of renditions or none. Instances
 * that share DATA_DIR (one host, or a shared volume) share the store; the key is a SHA-256 hex
 * digest and file names are checked, so a request can name nothing outside it.
 */
import { mkdir, mkdtemp, readFile, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

const KEY = /^[0-9a-f]{64}$/;
const FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$/;

/** Where conditioned renditions are written and read: this folder, or an S3-compatible store (./s3-files.ts). */
export interface RenditionStore {
  /** Where a file of a key's renditions lives (a path or an object name); undefined for a name that is not ours. */
  file(key: string, name: string): string | undefined;
  /** A fresh local scratch folder for a job's ffmpeg output (removed by `publish` or `discard`). */
  scratch(): Promise<string>;
  /** Stores a finished scratch folder's kept files as the key's renditions; answers their names, sorted. */
  publish(scratch: string, key: string, keep: (name: string) => boolean): Promise<string[]>;
  discard(scratch: string): Promise<void>;
  /** A file's bytes, undefined when there is none. */
  read(key: string, name: string): Promise<Buffer | undefined>;
}

export class CreativeFiles implements RenditionStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.resolve(dataDir, 'ad-creatives');
  }

  /** The path of one file of a key's renditions; undefined for a name that is not ours. */
  file(key: string, name: string): string | undefined {
    if (!KEY.test(key) || !FILE.test(name) || name.includes('..')) return undefined;
    return path.join(this.root, key, name);
  }

  /** A fresh scratch folder for a job (removed by `publish` or `discard`). */
  async scratch(): Promise<string> {
    await mkdir(this.root, { recursive: true });
    return mkdtemp(path.join(this.root, '.job-'));
  }

  /** Moves a finished scratch folder into place as the key's renditions (replacing an older set); answers its file names. */
  async publish(scratch: string, key: string, keep: (name: string) => boolean): Promise<string[]> {
    if (!KEY.test(key)) throw new Error('not a creative key');
    for (const name of await readdir(scratch)) if (!keep(name)) await rm(path.join(scratch, name), { force: true });
    const target = path.join(this.root, key);
    await rm(target, { recursive: true, force: true });
    await rename(scratch, target);
    return (await readdir(target)).sort();
  }

  async discard(scratch: string): Promise<void> {
    await rm(scratch, { recursive: true, force: true });
  }

  async read(key: string, name: string): Promise<Buffer | undefined> {
    const f = this.file(key, name);
    if (!f) return undefined;
    return readFile(f).catch(() => undefined);
  }
}
