/** Benchmark target: the simulated DAI host (precomputed bodies). Prints "READY <port>". */
import { DaiHostSim } from '../../lib/sim/dai-host.js';

const sim = await new DaiHostSim({ shape: { windowSegments: 55 }, dvrSegments: 1200 }).start(); // a 6 KB live variant
process.stdout.write(`READY ${sim.port}\n`);
process.on('SIGTERM', () => process.exit(0));
