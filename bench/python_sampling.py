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

from bench_run import measured_run


def bench_python_sampling(args, work):
    python = subprocess.run([shutil.which('python3'), '-c', 'import sys; print(sys.executable)'],
                            capture_output=True, check=True).stdout.decode().strip()
    asys = os.path.join(args.build, 'bin', 'asys')
    prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'python_workload.py')
    rounds = str(args.python_rounds)
    runs = {
        'no tool': [python, prog, rounds],
        # -s none: CPU sampling (on by default) has its own bench
        'asys, sampling off': [asys, 'profile', '-t', 'none', '-s', 'none', '--python-sampling',
                               'false', '--force-overwrite=true', '-o', 'off', python, prog,
                               rounds],
        'asys, 500 Hz': [asys, 'profile', '-t', 'none', '-s', 'none', '--force-overwrite=true',
                         '-o', 'on', python, prog, rounds],
        'cProfile': [python, '-m', 'cProfile', '-o', os.path.join(work, 'cprofile.out'), prog,
                     rounds],
    }
    times = {name: [] for name in runs}
    for _ in range(args.runs):  # interleaved: drift hits every column alike
        for name, argv in runs.items():
            times[name].append(measured_run(argv, work))
    med = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
    cpu = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    fastest = {name: min(w for w, _ in t) for name, t in times.items()}
    samples = subprocess.run([os.path.join(args.build, 'bin', 'asys-stats'), '-q', '-r',
                              'report_info', '--format', 'csv', os.path.join(work, 'on.asys-rep')],
                             capture_output=True, check=True).stdout.decode()
    rate = [l for l in samples.splitlines() if l.startswith('Python (pid')]
    print('\n## Python sampling: bench/python_workload.py %s rounds, median of %d runs'
          % (rounds, args.runs))
    print('| run | wall s (median) | ratio | fastest | ratio | CPU s | ratio |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    for name in runs:
        print('| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |'
              % (name, med[name], med[name] / med['no tool'], fastest[name],
                 fastest[name] / fastest['no tool'], cpu[name], cpu[name] / cpu['no tool']))
    print('sampling cost: %.1f %% wall (fastest: %.1f %%), %.1f %% CPU (500 Hz vs off); %s'
          % (100 * (med['asys, 500 Hz'] / med['asys, sampling off'] - 1),
             100 * (fastest['asys, 500 Hz'] / fastest['asys, sampling off'] - 1),
             100 * (cpu['asys, 500 Hz'] / cpu['asys, sampling off'] - 1),
             rate[0].split(',', 1)[1].strip('"') if rate else 'no samples'))
