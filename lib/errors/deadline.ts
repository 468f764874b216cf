/**
 * A signal that aborts after `ms` or when any of `signals` does: the one way deadlines are joined
 * to other signals here. `AbortSignal.any([s, AbortSignal.timeout(ms)])` is not used: on Node 20
 * a garbage collection can take the timeout signal before it fires (nodejs/node#57736; the
 * conditioning deadline test saw a 2 s deadline never fire), so the timer is held here and the
 * caller clears it when the work ends. Aborts with a `TimeoutError` DOMException, as
 * AbortSignal.timeout does.
 */
export interface Deadline {
  signal: AbortSignal;
  /** True once the deadline itself (not another signal) aborted. */
  readonly expired: boolean;
  /** Stops the timer (call when the work ended, in a finally). */
  clear(): void;
}

export function deadline(ms: number, ...signals: AbortSignal[]): Deadline {
  const own = new AbortController();
  const timer = setTimeout(() => own.abort(new DOMException(`the deadline of ${ms} ms passed`, 'TimeoutError')), ms);
  timer.unref?.();
  return {
    signal: signals.length ? AbortSignal.any([...signals, own.signal]) : own.signal,
    get expired() {
      return own.signal.aborted;
    },
    clear: () => clearTimeout(timer),
  };
}
