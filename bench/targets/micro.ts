/** Runs the micro benchmarks in a process of their own (the bench pins it to the server's core) and prints "MICRO <json>". */
import { runMicro } from '../micro.js';

process.stdout.write(`MICRO ${JSON.stringify(runMicro(process.argv.includes('--quick')))}\n`);
