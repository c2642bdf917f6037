"""Many reports, one analysis (issue 27): the import and rank_sum of 64
reports of 100 k HGTX ranges each, with asys-stats -j 1, -j 2 and on a Dask
LocalCluster of 2 workers; the largest process's peak RSS; the merged
analysis once every report is imported (target < 1 s); and a simulated set
of 1024 small reports (imported, then analysed again) to show how the cost
grows with the number of ranks.

The reports are one recording of hgtx_loop (rank 0) copied with the rank
in its manifest changed (the same events, so every report costs the same).
usage: bench/multireport.py [BUILD_DIR] (run from the tree's root)."""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else 'build'
ASYS = os.path.join(BUILD, 'bin', 'asys')
STATS = os.path.join(BUILD, 'bin', 'asys-stats')
LOOP = os.path.join(BUILD, 'tests', 'progs', 'hgtx_loop')


def record(directory, ranges):
    env = dict(os.environ, RANK='0', WORLD_SIZE='1', TMPDIR=directory)
    subprocess.run([ASYS, 'profile', '--multi-node-mode', 'true', '-t', 'nvtx', '-s', 'none',
                    '-o', os.path.join(directory, 'template'), LOOP, str(ranges)],
                   env=env, check=True, capture_output=True)
    unpacked = os.path.join(directory, 'unpacked')
    os.mkdir(unpacked)
    subprocess.run(['tar', '--zstd', '-xf', os.path.join(directory, 'template.asys-rep'),
                    '-C', unpacked], check=True)
    return unpacked


def clone(unpacked, runs, count):
    """COUNT reports of ranks 0 .. COUNT-1 in RUNS."""
    os.makedirs(runs)
    with open(os.path.join(unpacked, 'manifest.json')) as f:
        manifest = json.load(f)
    members = sorted(os.listdir(unpacked))
    members.remove('manifest.json')
    for rank in range(count):
        manifest['multi_node'].update(rank=rank, world_size=count)
        with open(os.path.join(unpacked, 'manifest.json'), 'w') as f:
            json.dump(manifest, f)
        subprocess.run(['tar', '--zstd', '-cf', os.path.join(runs, 'rep_%d.asys-rep' % rank),
                        '-C', unpacked, 'manifest.json', *members], check=True)


def drop_caches(runs, databases=True):
    """The partials kept beside the reports, and their databases."""
    for n in os.listdir(runs):
        if n.endswith('.asys-partial') or (databases and n.endswith('.sqlite')):
            os.unlink(os.path.join(runs, n))


def timed(argv, env=None):
    """Wall seconds of a run (its output discarded)."""
    start = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.monotonic() - start


def peak_rss_mib():
    """The largest waited-for descendant's peak RSS so far."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


CLUSTER = '''
import sys
from distributed import LocalCluster
if __name__ == '__main__':
    c = LocalCluster(n_workers=2, threads_per_worker=1, host='127.0.0.1',
                     dashboard_address=None, processes=True)
    print(c.scheduler_address, flush=True)
    sys.stdin.read()
    c.close()
'''


def dask_python():
    for python in (sys.executable, '/usr/bin/python3'):
        if subprocess.run([python, '-c', 'import distributed'],
                          capture_output=True).returncode == 0:
            return python
    return None


def on_dask(runs, work):
    python = dask_python()
    if not python:
        return None
    script = os.path.join(work, 'cluster.py')
    with open(script, 'w') as f:
        f.write(CLUSTER)
    proc = subprocess.Popen([python, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        address = proc.stdout.readline().decode().strip()
        env = dict(os.environ, ASYS_PYTHON=python)
        return timed([STATS, '-q', '--scheduler', address, '-r', 'rank_sum', runs], env)
    finally:
        proc.stdin.close()
        proc.wait()
        proc.stdout.close()


def main():
    work = tempfile.mkdtemp(prefix='asys-bench-multi-')
    try:
        unpacked = record(work, 100000)
        runs = os.path.join(work, 'runs64')
        clone(unpacked, runs, 64)
        rows = []
        for jobs in (1, 2):
            drop_caches(runs)
            rows.append(('64 x 100 k ranges: import + rank_sum, -j %d' % jobs,
                         '%.2f s' % timed([STATS, '-q', '-j', str(jobs), '-r', 'rank_sum', runs])))
        drop_caches(runs)
        seconds = on_dask(runs, work)
        rows.append(('the same on a Dask LocalCluster of 2 workers',
                     '%.2f s' % seconds if seconds is not None else 'no dask'))
        rows.append(('peak RSS of the largest process', '%.0f MiB' % peak_rss_mib()))
        drop_caches(runs, databases=False)
        rows.append(('rank_sum of the 64 once imported (-j 2)',
                     '%.3f s' % timed([STATS, '-q', '-j', '2', '-r', 'rank_sum', runs])))
        rows.append(('the same again (their partials kept)',
                     '%.3f s' % timed([STATS, '-q', '-j', '2', '-r', 'rank_sum', runs])))
        os.mkdir(os.path.join(work, 'small'))
        small = record(os.path.join(work, 'small'), 100)
        runs1024 = os.path.join(work, 'runs1024')
        clone(small, runs1024, 1024)
        rows.append(('1024 x 100 ranges: import + rank_sum, -j 2',
                     '%.2f s' % timed([STATS, '-q', '-j', '2', '-r', 'rank_sum', runs1024])))
        drop_caches(runs1024, databases=False)
        rows.append(('the 1024 once imported: rank_sum, -j 2',
                     '%.2f s' % timed([STATS, '-q', '-j', '2', '-r', 'rank_sum', runs1024])))
        rows.append(('the same again (their partials kept)',
                     '%.2f s' % timed([STATS, '-q', '-j', '2', '-r', 'rank_sum', runs1024])))
        for what, figure in rows:
            print('| %s | %s |' % (what, figure))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
