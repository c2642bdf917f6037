"""Python sampling cost (bench/run_benchmarks.py --only python_sampling): a
CPU-bound pure-Python program (bench/python_workload.py) without a tool,
under asys -t none with --python-sampling false and with the default
sampling (500 Hz), and under cProfile, median of --runs runs each.  The
sampling cost is the difference between the two asys runs (asys's own
start and finalize are in both).  Target: <= 3 % at 500 Hz."""
import os
import shutil
import statistics
import subprocess
import time


def _seconds(argv, cwd):
    start = time.monotonic()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def bench_python_sampling(args, work):
    python = shutil.which('python3')
    asys = os.path.join(args.build, 'bin', 'asys')
    prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'python_workload.py')
    rounds = str(args.python_rounds)
    runs = {
        'no tool': [python, prog, rounds],
        'asys, sampling off': [asys, 'profile', '-t', 'none', '--python-sampling', 'false',
                               '--force-overwrite=true', '-o', 'off', python, prog, rounds],
        'asys, 500 Hz': [asys, 'profile', '-t', 'none', '--force-overwrite=true', '-o', 'on',
                         python, prog, rounds],
        'cProfile': [python, '-m', 'cProfile', '-o', os.path.join(work, 'cprofile.out'), prog,
                     rounds],
    }
    times = {name: [] for name in runs}
    for _ in range(args.runs):  # interleaved: drift hits every column alike
        for name, argv in runs.items():
            times[name].append(_seconds(argv, work))
    med = {name: statistics.median(t) for name, t in times.items()}
    samples = subprocess.run([os.path.join(args.build, 'bin', 'asys-stats'), '-q', '-r',
                              'report_info', '--format', 'csv', os.path.join(work, 'on.asys-rep')],
                             capture_output=True, check=True).stdout.decode()
    rate = [l for l in samples.splitlines() if l.startswith('Python (pid')]
    print('\n## Python sampling: bench/python_workload.py %s rounds, median of %d runs'
          % (rounds, args.runs))
    print('| run | seconds | ratio to no tool |')
    print('|---|---:|---:|')
    for name in runs:
        print('| %s | %.3f | %.3f |' % (name, med[name], med[name] / med['no tool']))
    print('sampling cost: %.1f %% (500 Hz vs off); %s'
          % (100 * (med['asys, 500 Hz'] / med['asys, sampling off'] - 1),
             rate[0].split(',', 1)[1].strip('"') if rate else 'no samples'))
