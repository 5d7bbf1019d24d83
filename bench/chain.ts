/**
 * `npm run bench:chain [-- --spaces 10] [--units 5] [--runs 8] [--json]`: how fast the requests of a promotion can go
 * at all, with nothing of this process's own between them. Builds the fleet `npm run bench` builds, promotes one
 * ChangeOrder through dev, staging and prod as users would, and records each DynamoDB request the three commands send
 * (as sent: marshalled) and its round — a round begins when a request is sent while none of the promotion's is in
 * flight, that is once the work before it waited on its answers, and each command begins one. Then it copies the table
 * as it was before the promotions and replays the same requests on the copy, round by round, every request of a round
 * sent at once: no merging, no HTTP, no ElectroDB, no gates evaluated, only the SDK and the engine, and the Spaces'
 * writes all in flight together (the promotion sends each as its Space is merged). The same conditions hold on the
 * copy, so the same writes land. Printed per run, against the ceiling measured just before and just after (as in
 * `npm run bench`): the promotion's time and ratio, the replay's, and the replay's time in the rounds that write the
 * Spaces and in the others. The replay's ratio bounds what any change to this process's work could reach with these
 * requests: only fewer rounds, or cheaper writes, go past it. Warmed first like `npm run bench` (the ceiling until two
 * runs agree within 5%); the first runs are the engine still warming these requests' paths.
 */
import { startDynamoLocal } from '../lib/local/dynamo.ts';
import { option, warmCeiling } from './fleet.ts';
import { promoteAndReplay } from './replay.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const argv = process.argv.slice(2);
const SPACES = Number(option('spaces') ?? 10);
const M = Number(option('units') ?? 5);
const RUNS = Number(option('runs') ?? 8);
const JSON_OUT = argv.includes('--json');

const dynamo = process.env.AWS_ENDPOINT_URL ? undefined : await startDynamoLocal();
try {
  const endpoint = process.env.AWS_ENDPOINT_URL ?? dynamo!.endpoint;
  const warm = await warmCeiling(endpoint);
  if (!JSON_OUT) {
    console.log(`warm-up (not measured): ceiling ${warm.map((x) => x.toFixed(1)).join(', ')} units/s`);
    console.log(
      `${SPACES} Spaces x ${M} Units, one ChangeOrder through dev, staging and prod; its requests replayed round by round with nothing between them.\n`,
    );
    console.log(
      [
        'run',
        'requests',
        'rounds',
        'ceiling/s',
        'promote s',
        'ratio',
        'replay s',
        'ratio',
        'writing the Spaces',
        'the other rounds',
      ]
        .map((h, i) => (i < 8 ? h.padStart(9) : h))
        .join('  '),
    );
  }
  for (let i = 1; i <= RUNS; i++) {
    const r = await promoteAndReplay(endpoint, SPACES, M);
    if (JSON_OUT) console.log(JSON.stringify(r));
    else {
      const cells = [
        i,
        r.requests,
        r.rounds,
        r.ceilingUnitsPerSecond.toFixed(1),
        r.promoteSeconds.toFixed(3),
        r.ratio.toFixed(2),
        r.replaySeconds.toFixed(3),
        r.replayRatio.toFixed(2),
      ].map((c) => String(c).padStart(9));
      console.log(
        [
          ...cells,
          `${r.writeRounds} rounds, ${r.writeRoundsMs.toFixed(0)} ms`,
          `${r.otherRounds} rounds, ${r.otherRoundsMs.toFixed(0)} ms (${(r.otherRoundsMs / r.otherRounds).toFixed(1)} ms each)`,
        ].join('  '),
      );
    }
  }
} finally {
  await dynamo?.stop();
}
