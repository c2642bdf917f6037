"""NIC metrics sampling cost (bench/run_benchmarks.py --only nic): the
launcher's CPU time per sample with --nic-metrics at 1 kHz and 10 kHz, on
this machine's network interfaces (/sys/class/net, the Ethernet fallback:
sysfs attributes kept open and re-read with pread) and on a fake tree of
RDMA ports (regular files, reopened at each reading: an upper bound for
sysfs), against the same recording without NIC metrics; and the bytes per
value in the NIC segment before compression, and in the report after.
Targets: <= 2 % of one core at 1 kHz; <= 16 bytes per value before
compression.  The anchor: a thread that only wakes up at the same rate
(bench/timer_loop), measured in the same run; on a virtual machine a timer
wakeup alone can cost tens of microseconds of CPU, which no sampler avoids
at a fixed rate, so the table shows the sampler's own work beside it."""
import os
import shutil
import sqlite3
import statistics
import subprocess
import tempfile


def _launcher_cpu(argv, env):
    """CPU seconds (user + system) of the launcher and its program."""
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execve(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        raise RuntimeError('%s exited %d' % (' '.join(argv), status))
    return usage.ru_utime + usage.ru_stime


def _fake_rdma_tree(root, ports):
    for i in range(ports):
        base = os.path.join(root, 'class/infiniband/mlx5_%d/ports/1' % i)
        for d, names in (('counters', ('port_rcv_data', 'port_xmit_data', 'port_rcv_packets',
                                       'port_xmit_packets', 'port_xmit_wait')),
                         ('hw_counters', ('rp_cnp_handled', 'rp_cnp_ignored', 'np_cnp_sent'))):
            os.makedirs(os.path.join(base, d), exist_ok=True)
            for n in names:
                with open(os.path.join(base, d, n), 'w') as f:
                    f.write('%d\n' % (1000 + i))


def _segment_bytes(report, work):
    """The size of segments/nic.seg in the report (before compression)."""
    out = tempfile.mkdtemp(prefix='nic-seg-', dir=work)
    try:
        subprocess.run(['tar', '--zstd', '-xf', report, '-C', out, 'segments/nic.seg'],
                       check=True)
        return os.path.getsize(os.path.join(out, 'segments', 'nic.seg'))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def bench_nic(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    seconds = 3.0
    fake = os.path.join(work, 'fake-sys')
    _fake_rdma_tree(fake, 2)
    setups = [('this host\'s interfaces (/sys/class/net)', None),
              ('fake tree, 2 RDMA ports (regular files)', fake)]
    timer = os.path.join(args.build, 'bench', 'timer_loop')
    wakeup = {hz: statistics.median(
        float(subprocess.run([timer, str(hz), str(seconds)], capture_output=True,
                             check=True).stdout) for _ in range(args.runs)) for hz in (1000, 10000)}
    print('\n## NIC metrics: launcher CPU per sample, `sleep %g`, median of %d runs'
          % (seconds, args.runs))
    print('| devices | rate | values / sample | launcher CPU per sample | of one core | '
          'a bare wakeup (anchor) | sampler work above it | bytes / value (segment) | '
          'bytes / value (report, compressed) |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    for label, root in setups:
        env = dict(os.environ, TMPDIR=work)
        if root:
            env['ASYS_NIC_SYSFS_ROOT'] = root
        report = os.path.join(work, 'nic')
        base = [asys, 'profile', '-t', 'none', '-o', report, '--force-overwrite=true']
        plain = statistics.median(_launcher_cpu(base + ['sleep', str(seconds)], env)
                                  for _ in range(args.runs))
        for hz in (1000, 10000):
            argv = base + ['--nic-metrics', 'true', '--nic-metrics-frequency', str(hz),
                           'sleep', str(seconds)]
            runs = []
            for _ in range(args.runs):
                cpu = _launcher_cpu(argv, env)
                subprocess.run([stats, '-q', '-r', 'report_info', report + '.asys-rep'],
                               check=True, capture_output=True, env=env)
                con = sqlite3.connect(report + '.sqlite')
                devices = con.execute('SELECT COUNT(*), MAX(samples) FROM nic_devices').fetchone()
                rate = dict(con.execute("SELECT key, value FROM session_info "
                                        "WHERE key LIKE 'nic_%'"))
                con.close()
                runs.append((cpu, devices, rate))
            cpu = statistics.median(r[0] for r in runs)
            ticks = runs[-1][1][1]
            seg = _segment_bytes(report + '.asys-rep', work)
            # values: every sample record carries its counters (4 an interface, 8 an RDMA port)
            per_sample = 8 if root else 4
            device_count = runs[-1][1][0]
            value_count = ticks * device_count * per_sample
            size = os.path.getsize(report + '.asys-rep')
            added = max(cpu - plain, 0.0)
            per_tick = 1e6 * added / max(ticks, 1)
            print('| %s: %d | %d Hz (achieved %.0f) | %d | %.1f µs | %.2f %% | %.1f µs | '
                  '%.1f µs (%.2f %% of a core) | %.1f | %.2f |'
                  % (label, device_count, hz, runs[-1][2].get('nic_sample_mhz', 0) / 1000,
                     device_count * per_sample, per_tick, 100 * added / seconds, wakeup[hz],
                     per_tick - wakeup[hz], (per_tick - wakeup[hz]) * ticks / seconds / 1e4,
                     seg / max(value_count, 1), size / max(value_count, 1)))
