/**
 * The reference transcoder's jobs (docs/design.md §6 and §12): fetch the inputs, probe them, compose
 * with ffmpeg, add the `com.<brand>.vtg` ID3 tag, store the segment. One run per output key (the
 * same key in flight joins the run; a stored key answers at once), at most `concurrency` runs at a
 * time, each under a deadline that kills ffmpeg; outputs expire after the retention period.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { OutboundPolicy } from '../outbound/index.js';
import { composeArgs, ComposeError } from './compose.js';
import type { X264Preset } from '../config/schema.js';
import { FfmpegError, probe, run } from './ffmpeg.js';
import { injectTimedId3, vtgTag } from './id3-inject.js';
import { InputFetcher } from './inputs.js';
import { compositionOf, type SqueezeJob } from './job.js';
import { keyPath, ObjectStore } from './store.js';

export interface TranscoderOptions {
  dataDir: string;
  ffmpegPath: string;
  ffprobePath: string;
  /** Base of the output URIs (`<publicUrl>/objects/<key>.ts`). */
  publicUrl: string;
  concurrency: number;
  jobTimeoutMs: number;
  retentionSec: number;
  /** ffmpeg threads per job; 0 = ffmpeg's choice. */
  threads: number;
  /** x264 preset of the composed segments (TRANSCODER_X264_PRESET). */
  preset: X264Preset;
  fetchTimeoutMs: number;
  maxInputBytes: number;
}

/** A job whose inputs cannot be composed (probing or composing refused them): retrying will not help. */
export class UnusableInput extends Error {
  override name = 'UnusableInput';
}

export class JobTimeout extends Error {
  override name = 'JobTimeout';
}

/** Per-input caps below the configured maximum: a background PNG and a content segment are small. */
const CAP = { content: 64 * 1024 * 1024, background: 16 * 1024 * 1024 };

export class Transcoder {
  readonly store: ObjectStore;
  /** Compositions started (ffmpeg runs), for tests and metrics. */
  composed = 0;
  private readonly inFlight = new Map<string, Promise<string>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** The deadlines of the jobs running now: aborting one kills its ffmpeg. */
  private readonly jobs = new Set<AbortController>();
  private readonly fetcher: InputFetcher;
  private readonly sweeper: NodeJS.Timeout;
  private ffmpegOk = false;

  constructor(
    readonly opts: TranscoderOptions,
    policy: OutboundPolicy,
  ) {
    this.store = new ObjectStore(opts.dataDir);
    this.fetcher = new InputFetcher(policy, { timeoutMs: opts.fetchTimeoutMs, maxBytes: opts.maxInputBytes });
    const every = Math.max(1000, Math.min(60_000, (opts.retentionSec * 1000) / 4));
    this.sweeper = setInterval(() => void this.sweep(), every).unref();
  }

  outputUri(key: string): string {
    return `${this.opts.publicUrl}/objects/${keyPath(key)}.ts`;
  }

  /** Whether ffmpeg runs (`-version`); a success is remembered, a failure is asked again next time. */
  async checkFfmpeg(): Promise<void> {
    if (this.ffmpegOk) return;
    await run(this.opts.ffmpegPath, ['-hide_banner', '-version'], 10_000);
    await run(this.opts.ffprobePath, ['-hide_banner', '-version'], 10_000);
    this.ffmpegOk = true;
  }

  /** The output URI of a validated job, composing it unless it is stored or already running. */
  async compose(job: SqueezeJob): Promise<string> {
    const key = job.output_key;
    const file = this.store.file(key);
    if (!file) throw new UnusableInput('output_key does not name an object');
    const running = this.inFlight.get(key);
    if (running) return running;
    if ((await this.store.size(file)) !== undefined) return this.outputUri(key);
    let p = this.inFlight.get(key); // another caller may have started while we looked at the disk
    if (!p) {
      p = this.withSlot(() => this.run(job, file)).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, p);
    }
    return p;
  }

  private async run(job: SqueezeJob, file: string): Promise<string> {
    await this.checkFfmpeg();
    const comp = compositionOf(job);
    const deadline = new AbortController();
    this.jobs.add(deadline);
    const timer = setTimeout(
      () => deadline.abort(new JobTimeout(`the job ran longer than ${this.opts.jobTimeoutMs} ms`)),
      this.opts.jobTimeoutMs,
    );
    const tmpRoot = path.join(this.opts.dataDir, 'tmp');
    await mkdir(tmpRoot, { recursive: true });
    const dir = await mkdtemp(path.join(tmpRoot, 'job-'));
    const within = <T>(p: Promise<T>): Promise<T> =>
      Promise.race([
        p,
        new Promise<never>((_, reject) => {
          if (deadline.signal.aborted) reject(deadline.signal.reason as Error);
          deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error), { once: true });
        }),
      ]);
    try {
      const files = {
        content: path.join(dir, 'content.ts'),
        ad: path.join(dir, 'ad.mp4'),
        background: comp.backgroundUri ? path.join(dir, 'background.png') : undefined,
      };
      await within(
        Promise.all([
          this.fetcher.toFile(
            'content_uri',
            comp.contentUri,
            files.content,
            Math.min(CAP.content, this.opts.maxInputBytes),
          ),
          this.fetcher.toFile('ad_uri', comp.adUri, files.ad),
          comp.backgroundUri && files.background
            ? this.fetcher.toFile(
                'background_uri',
                comp.backgroundUri,
                files.background,
                Math.min(CAP.background, this.opts.maxInputBytes),
              )
            : undefined,
        ]),
      );
      const probeMs = Math.min(30_000, this.opts.jobTimeoutMs);
      const [content, ad] = await within(
        Promise.all([
          probe(this.opts.ffprobePath, files.content, probeMs, { audioPackets: true }),
          probe(this.opts.ffprobePath, files.ad, probeMs),
        ]).catch(unusable),
      );
      const output = path.join(dir, 'out.ts');
      let args: string[];
      try {
        args = composeArgs({ comp, content, ad, files, output, threads: this.opts.threads, preset: this.opts.preset });
      } catch (err) {
        throw err instanceof ComposeError ? new UnusableInput(err.message) : err;
      }
      this.composed++;
      await within(run(this.opts.ffmpegPath, args, this.opts.jobTimeoutMs, deadline.signal));
      let bytes: Buffer = await readFile(output);
      if (comp.id3) bytes = injectTimedId3(bytes, vtgTag(comp.id3.owner, comp.id3.value), content.video?.startPts ?? 0);
      await this.store.put(file, bytes);
      return this.outputUri(job.output_key);
    } finally {
      clearTimeout(timer);
      this.jobs.delete(deadline);
      deadline.abort(new JobTimeout('the job ended'));
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async withSlot<T>(fn: () => Promise<T>): Promise<T> {
    while (this.running >= this.opts.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Deletes outputs older than the retention period. */
  sweep(now = Date.now()): Promise<number> {
    return this.store.sweep(this.opts.retentionSec * 1000, now);
  }

  /** Job folders a crashed run left behind: this process owns the data directory. */
  async clearTmp(): Promise<void> {
    await rm(path.join(this.opts.dataDir, 'tmp'), { recursive: true, force: true });
  }

  /** Stops: running jobs are aborted (their ffmpeg killed), so nothing outlives the process. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const job of this.jobs) job.abort(new JobTimeout('the transcoder is stopping'));
    await this.fetcher.close();
  }
}

/** ffprobe failing on an input means the input is not media we can read. */
function unusable(err: unknown): never {
  if (err instanceof FfmpegError && err.code === 'failed')
    throw new UnusableInput(`an input is not readable media: ${err.message}`);
  throw err;
}
