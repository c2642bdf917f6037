"""Programs that start many processes, with and without `asys profile -t
osrt,hgtx` (bench/run_benchmarks.py --only processes): a shell script of 500
fork/execs, `make -j2` of a generated 200-file C project, and git on a local
repository; `strace -f -c` on the same programs as the raw cost of
watching process creation.  Prints the ratios, the time each process adds at
start (in the program's run) and at finalize (after it), and the first
import of the report."""
import json
import os
import shutil
import statistics
import subprocess
import time

PIPELINE = r'''#!/bin/sh
# 500 fork/execs: 100 rounds of a three-command pipeline and two commands
i=0
while [ $i -lt 100 ]; do
  echo "line $i" | tr a-z A-Z | wc -c > /dev/null
  /bin/true
  cat /dev/null
  i=$((i+1))
done
'''

GIT = r'''#!/bin/sh
set -e
rm -rf repo && git init -q repo && cd repo
git config user.email bench@example.com && git config user.name bench
for i in $(seq 1 60); do echo "file $i" > f$i.txt; git add f$i.txt; done
git commit -q -m one
for i in $(seq 1 20); do echo "change $i" >> f$i.txt; git commit -q -am "change $i"; done
git log --oneline > /dev/null
git gc -q
git fsck --no-progress > /dev/null
'''


def make_project(root, files=200):
    os.makedirs(root, exist_ok=True)
    objs = []
    for i in range(files):
        with open(os.path.join(root, 'f%d.c' % i), 'w') as f:
            f.write('#include <stdio.h>\nint f%d(int x) { int s = 0; for (int i = 0; i < x; i++) '
                    's += i * %d; return s; }\n' % (i, i + 1))
        objs.append('f%d.o' % i)
    with open(os.path.join(root, 'main.c'), 'w') as f:
        f.write('int main(void) { return 0; }\n')
    with open(os.path.join(root, 'Makefile'), 'w') as f:
        f.write('OBJS = %s main.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
                '%%.o: %%.c\n\t$(CC) -O1 -c $< -o $@\nclean:\n\trm -f *.o prog\n' % ' '.join(objs))


def timed(argv, cwd, env=None):
    t = time.monotonic()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def manifest(report):
    out = subprocess.run(['tar', '--zstd', '-xOf', report, 'manifest.json'], capture_output=True,
                         check=True).stdout
    return json.loads(out)


def bench_processes(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    env = dict(os.environ, TMPDIR=work)
    with open(os.path.join(work, 'pipeline.sh'), 'w') as f:
        f.write(PIPELINE)
    with open(os.path.join(work, 'git.sh'), 'w') as f:
        f.write(GIT)
    project = os.path.join(work, 'project')
    make_project(project)
    workloads = [('shell pipelines, 500 fork/execs', ['sh', os.path.join(work, 'pipeline.sh')],
                  work, None),
                 ('make -j2, 200 C files', ['make', '-s', '-j2'], project,
                  ['make', '-s', 'clean'])]
    if shutil.which('git'):
        workloads.append(('git init/add/commit/log/gc/fsck', ['sh', os.path.join(work, 'git.sh')],
                          work, None))
    rows = []
    report = os.path.join(work, 'procs.asys-rep')
    for name, argv, cwd, reset in workloads:
        plain, straced, traced, run_s, finalize_s, imports = [], [], [], [], [], []
        processes = segments = size = 0
        for _ in range(args.runs):
            if reset:
                timed(reset, cwd)
            plain.append(timed(argv, cwd))
            if shutil.which('strace'):
                if reset:
                    timed(reset, cwd)
                straced.append(timed(['strace', '-f', '-c', '-o', os.devnull, *argv], cwd))
            if reset:
                timed(reset, cwd)
            traced.append(timed([asys, 'profile', '-t', 'osrt,hgtx', '-o', report,
                                 '--force-overwrite=true', *argv], cwd, env))
            m = manifest(report)
            session = m['session']
            run = (int(session['end_monotonic_ns']) - int(session['start_monotonic_ns'])) / 1e9
            run_s.append(run)
            finalize_s.append(traced[-1] - run)
            segments = sum(1 for s in m['segments'] if s['collector'] == 'thread')
            size = os.path.getsize(report)
            sqlite = os.path.join(work, 'procs.sqlite')
            if os.path.exists(sqlite):
                os.unlink(sqlite)
            imports.append(timed([stats, '-q', '--report', 'report_info', report], work))
            out = subprocess.run([stats, '-q', '--report', 'report_info', '-f', 'csv', report],
                                 capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                if line.startswith('Processes,'):
                    processes = int(line.split(',')[1])
        p = statistics.median(plain)
        t = statistics.median(traced)
        r = statistics.median(run_s)
        rows.append({'name': name, 'plain': p, 'strace': statistics.median(straced) if straced else None,
                     'asys': t, 'run': r, 'finalize': statistics.median(finalize_s),
                     'processes': processes, 'segments': segments, 'bytes': size,
                     'import': statistics.median(imports)})
    print('\n## Many processes: `asys profile -t osrt,hgtx`, median of %d runs' % args.runs)
    print('| program | processes | without | strace -f -c | asys | ratio | start ms/process '
          '| finalize ms/process | segments | report | first import |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for r in rows:
        n = max(r['processes'], 1)
        print('| %s | %d | %.2f s | %s | %.2f s | %.2f× | %.2f | %.2f | %d | %.0f KiB | %.2f s |' % (
            r['name'], r['processes'], r['plain'],
            '%.2f s' % r['strace'] if r['strace'] else 'n/a', r['asys'], r['asys'] / r['plain'],
            1000 * (r['run'] - r['plain']) / n, 1000 * r['finalize'] / n, r['segments'],
            r['bytes'] / 1024, r['import']))
    return rows
