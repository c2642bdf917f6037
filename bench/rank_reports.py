"""One asys profile around a launcher of several ranks, and their reports on
one timeline (bench/run_benchmarks.py --only ranks): the launcher (a shell
starting RANKS hgtx_loop ranks of PAIRS push/pop pairs each) recorded into
one report per rank (--multi-node-mode true, -o rep_%r) against the same run
recorded into one report; then asys-export of the rank reports into one
pftrace against asys-export of the one report (the same ranges).  Wall time,
configurations interleaved, median of --runs; the analysis databases are
built before the exports are timed."""
import glob
import os
import statistics
import subprocess
import time

LAUNCHER = """#!/bin/sh
n=$1; shift
r=0
while [ $r -lt $n ]; do RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n "$@" & r=$((r + 1)); done
wait
"""


def bench_ranks(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    export = os.path.join(args.build, 'bin', 'asys-export')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    loop = os.path.join(args.build, 'tests', 'progs', 'hgtx_loop')
    ranks, pairs = args.rank_count, args.rank_pairs
    launcher = os.path.join(work, 'launch.sh')
    with open(launcher, 'w') as f:
        f.write(LAUNCHER)
    os.chmod(launcher, 0o755)
    env = dict(os.environ, TMPDIR=work)
    env = {k: v for k, v in env.items() if k not in ('RANK', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK',
                                                       'SLURM_PROCID')}

    def timed(argv):
        start = time.monotonic()
        subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True)
        return time.monotonic() - start

    split, one = [], []
    for _ in range(args.runs):
        split.append(timed([asys, 'profile', '--multi-node-mode', 'true', '-t', 'nvtx', '-s',
                            'none', '-f', 'true', '-o', 'rep_%r', launcher, str(ranks), loop,
                            str(pairs)]))
        one.append(timed([asys, 'profile', '-t', 'nvtx', '-s', 'none', '-f', 'true', '-o', 'one',
                          launcher, str(ranks), loop, str(pairs)]))
    reports = sorted(glob.glob(os.path.join(work, 'rep_*.asys-rep')))
    for r in reports + [os.path.join(work, 'one.asys-rep')]:
        subprocess.run([stats, '-q', '-r', 'report_info', r], check=True, capture_output=True)
    many, single = [], []
    for _ in range(args.runs):
        many.append(timed([export, '-q', '-f', '-o', 'all.pftrace', *reports]))
        single.append(timed([export, '-q', '-f', '-o', 'one.pftrace', 'one.asys-rep']))
    size_many = os.path.getsize(os.path.join(work, 'all.pftrace'))
    size_one = os.path.getsize(os.path.join(work, 'one.pftrace'))
    print('\n## Ranks: %d ranks x %d push/pop pairs, seconds, median of %d runs'
          % (ranks, pairs, args.runs))
    print('| what | one report per rank | one report | ratio |')
    print('|---|---:|---:|---:|')
    print('| asys profile around the launcher (recording and finalize) | %.3f | %.3f | %.2f |'
          % (statistics.median(split), statistics.median(one),
             statistics.median(split) / statistics.median(one)))
    print('| asys-export to one pftrace | %.3f | %.3f | %.2f |'
          % (statistics.median(many), statistics.median(single),
             statistics.median(many) / statistics.median(single)))
    print('| pftrace bytes | %d | %d | %.3f |' % (size_many, size_one, size_many / size_one))
