import { readFileSync } from 'node:fs';

/** True while a process runs. A zombie (exited, not yet reaped by its new parent) answers signal 0 but is gone. */
export function isProcessAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
}
