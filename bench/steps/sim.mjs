// Simulator figures: `idem-lab bench` (crates/sim) simulating 1,000,000 checkouts with the
// lesson preset's faults; target under 60 s on 2 cores, and the simulation at most 10x the
// bare store operations of the same run. Built with the `bench` profile into target/bench.
import { figure, fmt, run, save, say } from './lib.mjs';

const STEP = 'sim';
const CHECKOUTS = Number(process.env.IDEM_BENCH_CHECKOUTS ?? 1_000_000);
const env = { ...process.env, CARGO_TARGET_DIR: 'target/bench' };

say(STEP, 'building idem-lab (bench profile)');
run('cargo', ['build', '--locked', '--profile', 'bench', '-p', 'idem-sim', '--bin', 'idem-lab'], { env, stdio: 'inherit' });
say(STEP, `idem-lab bench --checkouts ${CHECKOUTS} --json`);
// idem-lab exits non-zero when any order was charged twice; run() throws on that.
const r = JSON.parse(run('target/bench/release/idem-lab', ['bench', '--checkouts', String(CHECKOUTS), '--json']));
for (const k of ['checkouts', 'sim_secs', 'store_ops', 'store_secs', 'checkouts_per_sec', 'ratio', 'double_charged']) {
  if (typeof r[k] !== 'number') throw new Error(`idem-lab bench --json: missing number "${k}"`);
}
if (r.double_charged !== 0) throw new Error(`idem-lab bench: ${r.double_charged} double charges`);
// Scale to the target's 1,000,000 checkouts when a smaller run was asked for.
const secsFor1M = (r.sim_secs * 1_000_000) / r.checkouts;
const figures = [
  figure({
    id: 'sim.million',
    name: 'Simulator: 1,000,000 checkouts, faults on (lesson preset), wall time',
    value: `${fmt(secsFor1M)} s (${Math.round(r.checkouts_per_sec).toLocaleString('en-US')} checkouts/s)`,
    target: '< 60 s',
    ratio: secsFor1M / 60,
    limit: 1,
  }),
  figure({
    id: 'sim.cost',
    name: 'Simulator cost vs bare store operations of the same run',
    value: `${fmt(r.sim_secs)} s vs ${fmt(r.store_secs)} s (${r.store_ops.toLocaleString('en-US')} store ops)`,
    target: '≤ 10×',
    ratio: r.ratio,
    limit: 10,
  }),
];
save(STEP, { figures, raw: r });
