/**
 * The reference transcoder's object store: `<dir>/objects/<output_key>.ts` on disk, served at
 * `/objects/<output_key>.ts`. Keys are validated (lib/transcoder/job.ts: no empty, `.` or `..`
 * segment) and each segment is percent-encoded, so a key maps to one path under the store and
 * nowhere else. Writes are atomic (temporary file, then rename): a reader sees a whole object or none.
 * Objects expire after the retention period (a sweep by modification time).
 */
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** `a/b c` → `a/b%20c`; undefined for a key that must not name a file. */
export function keyPath(key: string): string | undefined {
  const segments = key.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return segments.map(encodeURIComponent).join('/');
}

export class ObjectStore {
  readonly root: string;
  private tmpSeq = 0;

  constructor(dataDir: string) {
    this.root = path.resolve(dataDir, 'objects');
  }

  /** The file of a key (its URL path, `<key path>.ts`, below the root); undefined for a bad key. */
  file(key: string): string | undefined {
    const rel = keyPath(key);
    if (rel === undefined) return undefined;
    const file = path.join(this.root, `${rel}.ts`);
    return file.startsWith(this.root + path.sep) ? file : undefined;
  }

  /** The file behind a request path below `/objects/` (still percent-encoded), if it names one. */
  fileOfUrlPath(encoded: string): string | undefined {
    if (!encoded.endsWith('.ts')) return undefined;
    let key: string;
    try {
      key = encoded.slice(0, -3).split('/').map(decodeURIComponent).join('/');
    } catch {
      return undefined;
    }
    return this.file(key);
  }

  /** Size of a stored object, or undefined. */
  async size(file: string): Promise<number | undefined> {
    try {
      const s = await stat(file);
      return s.isFile() ? s.size : undefined;
    } catch {
      return undefined;
    }
  }

  async put(file: string, bytes: Buffer): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${++this.tmpSeq}.tmp`;
    try {
      await writeFile(tmp, bytes);
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /** Deletes objects (and stray temporary files) older than `maxAgeMs`; answers how many. */
  async sweep(maxAgeMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.isFile()) {
          const s = await stat(p).catch(() => undefined);
          if (s && now - s.mtimeMs > maxAgeMs) {
            await rm(p, { force: true });
            removed++;
          }
        }
      }
    };
    await walk(this.root);
    return removed;
  }
}
