import { runFleetLoad } from './zzDbgLoad.ts';
const report = await runFleetLoad({ clients: 60, callsPerClient: 20, fault: 'rolling', paceMs: 1500 });
const { faultOver, ...rest } = report;
console.log(`RESULT ${JSON.stringify(rest)}`);
for (const s of faultOver?.steps ?? []) console.log(`STEP ${s}`);
process.exit(0);
