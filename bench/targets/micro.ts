/** Runs the micro benchmarks in a process of their own (the bench pins it to the server's core) and prints "MICRO <json>". */
import { runMicro } from '../micro.js';
import { scte35Rate } from '../scte35.js';

const quick = process.argv.includes('--quick');
process.stdout.write(`MICRO ${JSON.stringify(runMicro(quick))}\n`);
process.stdout.write(`SCTE35 ${JSON.stringify(scte35Rate(quick ? 500 : 2000))}\n`);
