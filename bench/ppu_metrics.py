"""PPU metrics sampling cost (bench/run_benchmarks.py --only ppu_metrics): a
program that sleeps --ppu-seconds on simppu, recorded with and without
--ppu-metrics-device 0 (the summary set, 11 metrics) at 1 kHz and 10 kHz;
the launcher's extra CPU time per sample and as a share of one core, and the
bytes per value of the device's segment before compression.  Targets:
<= 2 % of one core at 1 kHz, <= 16 bytes per value."""
import os
import subprocess
import tarfile
import tempfile

from bench_run import measured_run


def _segment_bytes(report):
    out = subprocess.run(['tar', '--zstd', '-tvf', report], capture_output=True, check=True)
    total = 0
    for line in out.stdout.decode().splitlines():
        fields = line.split()
        if 'ppumetrics-' in fields[-1]:
            total += int(fields[2])
    return total


def _samples(args, report):
    out = subprocess.run([os.path.join(args.build, 'bin', 'asys-stats'), '-q', '-r',
                          'report_info', '--format', 'csv', report], capture_output=True,
                         check=True).stdout.decode()
    for line in out.splitlines():
        if line.startswith('PPU metrics (device 0)'):
            return int(line.split(' samples')[0].rsplit(' ', 1)[1])
    raise SystemExit('no PPU metrics in %s' % report)


def bench_ppu_metrics(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    run = os.path.join(args.build, 'simppu', 'simppu-run')
    seconds = args.ppu_seconds
    env = dict(os.environ, SIMPPU_DEVICES='1', SIMPPU_STATE=os.path.join(work, 'simppu-state'))
    print('\n## PPU metrics sampling: sleep %g s on simppu, summary set (11 metrics), median of '
          '%d runs' % (seconds, args.runs))
    print('| frequency | launcher CPU without | with | per sample | share of one core | '
          'bytes per value |')
    print('|---:|---:|---:|---:|---:|---:|')
    base_argv = [run, asys, 'profile', '-t', 'none', '-s', 'none', '--force-overwrite=true']
    without = sorted(measured_run(base_argv + ['-o', 'base', 'sleep', str(seconds)], work, env)[1]
                     for _ in range(args.runs))[args.runs // 2]
    for hz in (1000, 10000):
        cpu, report = [], os.path.join(work, 'ppu%d.asys-rep' % hz)
        for _ in range(args.runs):
            cpu.append(measured_run(base_argv + ['-o', 'ppu%d' % hz, '--ppu-metrics-device', '0',
                                                 '--ppu-metrics-frequency', str(hz), 'sleep',
                                                 str(seconds)], work, env)[1])
        with_ppu = sorted(cpu)[args.runs // 2]
        samples = _samples(args, report)
        extra = max(with_ppu - without, 0.0)
        print('| %d Hz | %.3f s | %.3f s | %.2f us | %.2f %% | %.1f |'
              % (hz, without, with_ppu, extra / samples * 1e6, 100 * extra / seconds,
                 _segment_bytes(report) / (samples * 11.0)))
