"""CPU sampling (bench/run_benchmarks.py --only cpu_sampling): a CPU-bound
loop (tests/progs/cpu_burn_* loop) without a tool, under `asys profile -s
process-tree` with -b fp and -b dwarf, and under `perf record -g` and `perf
record --call-graph dwarf` at the same event and period.  Prints the
slowdown of the loop (its own clock), the bytes per sample of the report
against perf.data, and the offline rate: asys's unwinding and symbolization
after the run (the launcher's time after the program ended, less that of a
run without sampling) against `perf script` on the perf.data."""
import json
import os
import shutil
import statistics
import subprocess
import time


def run(argv, env=None, cwd=None):
    r = subprocess.run(argv, capture_output=True, env=env, cwd=cwd)
    if r.returncode != 0:
        raise SystemExit('benchmark step failed: %s\n%s' % (' '.join(argv),
                                                           r.stderr.decode(errors='replace')))
    return r


def manifest(report):
    out = subprocess.run(['tar', '--zstd', '-xOf', report, 'manifest.json'], capture_output=True,
                         check=True).stdout
    return json.loads(out)


def bench_cpu_sampling(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    progs = os.path.join(args.build, 'tests', 'progs')
    perf = shutil.which('perf')
    env = dict(os.environ, TMPDIR=work)
    millions = str(getattr(args, 'cpu_loop_millions', 2000))
    loop = {'fp': [os.path.join(progs, 'cpu_burn_fp'), 'loop', millions],
            'nofp': [os.path.join(progs, 'cpu_burn_nofp'), 'loop', millions]}
    report = os.path.join(work, 'cpu.asys-rep')

    def plain(build):
        return float(run(loop[build]).stdout)

    def with_asys(build, options):
        t0 = time.monotonic()
        r = run([asys, 'profile', '-t', 'none', '-o', report, '--force-overwrite=true', *options,
                 *loop[build]], env=env, cwd=work)
        wall = time.monotonic() - t0
        loop_s = float(r.stdout)
        m = manifest(report)
        return loop_s, wall, m.get('cpu-sampling', {}), os.path.getsize(report)

    tools = [('asys -s process-tree -b fp', 'fp', ['-b', 'fp']),
             ('asys -s process-tree -b dwarf', 'nofp', ['-b', 'dwarf'])]
    peers = [('perf record -g', 'fp', ['-g']),
             ('perf record --call-graph dwarf', 'nofp', ['--call-graph', 'dwarf'])]
    plain_s = {b: [] for b in loop}
    none_post = []
    measured = {label: {'loop': [], 'post': [], 'size': [], 'samples': []}
                for label, _, _ in tools + (peers if perf else [])}
    event = period = None
    data = os.path.join(work, 'perf.data')
    # round robin, so that a change of the machine's load touches every column alike
    for _ in range(args.runs):
        for b in loop:
            plain_s[b].append(plain(b))
        loop_s, wall, _, _ = with_asys('nofp', ['-s', 'none'])
        none_post.append(wall - loop_s)
        for label, build, options in tools:
            loop_s, wall, info, size = with_asys(build, ['-s', 'process-tree', *options])
            m = measured[label]
            m['loop'].append(loop_s / plain_s[build][-1])
            m['post'].append(wall - loop_s - none_post[-1])
            m['size'].append(size / int(info['samples']))
            m['samples'].append(int(info['samples']))
            event, period = info['event'], int(info['period'])
        for label, build, options in (peers if perf else []):
            r = run([perf, 'record', '-q', '-o', data, '-e', event, '-c', str(period), *options,
                     *loop[build]], cwd=work)
            loop_s = float(r.stdout.split()[-1])
            t0 = time.monotonic()
            out = run([perf, 'script', '-i', data, '-F', 'comm,tid,time,ip,sym'], cwd=work)
            m = measured[label]
            m['post'].append(time.monotonic() - t0)
            # one header line per sample, its frames indented below
            n = sum(1 for line in out.stdout.decode(errors='replace').splitlines()
                    if line and not line[0].isspace())
            m['loop'].append(loop_s / plain_s[build][-1])
            m['size'].append(os.path.getsize(data) / max(n, 1))
            m['samples'].append(n)
    rows = []
    for label, m in measured.items():
        n = statistics.median(m['samples'])
        rows.append((label, statistics.median(m['loop']), statistics.median(m['size']),
                     n / max(statistics.median(m['post']), 1e-6), n))
    print('\n## CPU sampling (%s M iterations, %s every %s, median of %d runs)' %
          (millions, event, period, args.runs))
    print('| tool | loop slowdown | bytes per sample | offline unwind + symbolize (samples/s) '
          '| samples |')
    print('|---|---:|---:|---:|---:|')
    for label, slowdown, bytes_per_sample, rate, n in rows:
        print('| %s | %.3fx | %.0f | %.0f | %d |' % (label, slowdown, bytes_per_sample, rate, n))
    if not perf:
        print('(perf not installed: no peer figures)')
    print('offline rate: asys = samples / (launcher time after the program, less a -s none run); '
          'perf = samples / `perf script` time')
