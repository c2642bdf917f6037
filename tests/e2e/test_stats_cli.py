"""asys-stats as scripts use it: formats, outputs, units, filters, custom
reports, the cached database, and the asys command table."""
import csv
import io
import json
import os
import re
import subprocess
import time
import unittest

from asys_e2e import ASYS, BIN, STATS, AsysTestCase, prog


class StatsCli(AsysTestCase):
    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_threads'), '2', '10', '3000'], options=['-t', 'nvtx'])

    def test_default_report_and_column_format(self):
        r = self.stats(self.report())
        out = r.stdout.decode()
        self.assertIn('** HGTX Range Summary (hgtx_sum):', out)
        header = [l for l in out.splitlines() if 'Time (%)' in l][0]
        for col in ['Time (%)', 'Total Time (ns)', 'Instances', 'Avg (ns)', 'Med (ns)', 'Min (ns)',
                    'Max (ns)', 'StdDev (ns)', 'Style', 'Range']:
            self.assertIn(col, header)
        self.assertEqual(r.stderr, b'')  # progress only on a terminal

    def test_nsys_alias_and_table_format(self):
        out = self.stats('-q', '--report', 'nvtx_sum', '--format', 'table', self.report()).stdout.decode()
        self.assertIn('| Time (%) |', out)
        self.assertIn('+----------+', out)

    def test_tsv_and_json(self):
        tsv = self.stats('-q', '-r', 'hgtx_sum', '-f', 'tsv', self.report()).stdout.decode()
        self.assertTrue(tsv.startswith('Time (%)\tTotal Time (ns)\t'))
        data = json.loads(self.stats('-q', '-r', 'hgtx_sum', '-f', 'json', self.report()).stdout)
        self.assertEqual({d['Range'] for d in data}, {':outer', ':inner', ':main'})
        self.assertIsInstance(data[0]['Instances'], int)

    def test_files_get_the_mode_the_umask_allows(self):
        # written through mkstemp temporaries (0600): renamed with the umask's mode,
        # like the report itself, so a shared directory stays shared
        export = os.path.join(os.path.dirname(STATS), 'asys-export')
        for mask in (0o022, 0o077):
            for name in ('rep.sqlite', 'out_hgtx_sum.csv', 'out.pftrace'):
                if os.path.exists(self.path(name)):
                    os.unlink(self.path(name))
            old = os.umask(mask)
            try:
                self.stats('-q', '-r', 'hgtx_sum', '-o', self.path('out'), self.report())
                r = self.run_cmd([export, '-q', '-o', self.path('out.pftrace'), self.report()])
            finally:
                os.umask(old)
            self.assertEqual(r.returncode, 0, r.stderr)
            for name in ('rep.sqlite', 'out_hgtx_sum.csv', 'out.pftrace'):
                self.assertEqual(os.stat(self.path(name)).st_mode & 0o777, 0o666 & ~mask, name)

    def test_timeunit(self):
        ns = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        ms = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'rep', '--timeunit', 'ms')}
        self.assertIn('Total Time (ms)', ms[':inner'])
        self.assertAlmostEqual(float(ms[':inner']['Total Time (ms)']),
                               int(ns[':inner']['Total Time (ns)']) / 1e6, places=5)

    def test_filter_time_clips_and_recomputes(self):
        full = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        trace = self.stats_rows('hgtx_pushpop_trace')
        first_inner = [r for r in trace if r['Name'] == 'inner'][0]
        start = int(first_inner['Start (ns)'])
        mid = start + int(first_inner['Duration (ns)']) // 2
        window = '%d/%d' % (mid, mid + 10000000)
        cut = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'rep', '--filter-time', window)}
        self.assertLess(int(cut[':inner']['Instances']), int(full[':inner']['Instances']))
        self.assertLessEqual(int(cut[':main']['Total Time (ns)']), 10000000)
        self.assertAlmostEqual(sum(float(r['Time (%)']) for r in cut.values()), 100.0, places=9)
        # units in the window
        s = mid / 1e9
        cut2 = self.stats_rows('hgtx_sum', 'rep', '--filter-time', '%.9fs/%.9fs' % (s, s + 0.01))
        self.assertEqual(len(cut2), len(cut))

    def test_output_files_and_pipe(self):
        self.stats('-q', '-r', 'hgtx_sum,report_info', '-o', self.path('out'), self.report())
        with open(self.path('out_hgtx_sum.csv')) as f:
            self.assertEqual(len(list(csv.DictReader(f))), 3)
        self.assertTrue(os.path.exists(self.path('out_report_info.csv')))
        self.stats('-q', '-r', 'hgtx_sum', '-f', 'json', '-o', self.path('j'), self.report())
        json.load(open(self.path('j_hgtx_sum.json')))
        self.stats('-q', '-r', 'hgtx_sum', '-f', 'csv', '-o', '@wc -l > %s' % self.path('count'), self.report())
        self.assertEqual(open(self.path('count')).read().strip(), '4')

    def test_output_into_a_directory(self):
        # -o . wrote a hidden ._hgtx_sum.csv (issue 31.14)
        os.mkdir(self.path('outdir'))
        for target in ('.', self.path('outdir') + '/'):
            self.stats('-q', '-r', 'hgtx_sum', '-o', target, self.report())
        self.assertTrue(os.path.exists(self.path('rep_hgtx_sum.csv')))
        self.assertFalse(os.path.exists(self.path('._hgtx_sum.csv')))
        self.assertEqual(os.listdir(self.path('outdir')), ['rep_hgtx_sum.csv'])

    def test_interrupted_import_says_so_and_leaves_nothing(self):
        # Ctrl-C during a long import: exit 130 with one line (issue 31.14)
        self.profile([prog('hgtx_loop'), '3000000'], options=['-t', 'nvtx', '-s', 'none'],
                     name='big')
        stats = subprocess.Popen([STATS, '-q', self.report('big')], cwd=self.dir, env=self.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
                '.sqlite' in n for n in os.listdir(self.dir)):  # the import has begun
            time.sleep(0.01)
        time.sleep(0.1)
        stats.send_signal(2)
        _, err = stats.communicate(timeout=60)
        self.assertEqual(stats.returncode, -2, err)  # killed by SIGINT: the shell says 130
        self.assertEqual(err.decode().strip().splitlines(),
                         ['asys-stats: interrupted; nothing written'])
        self.assertEqual([n for n in os.listdir(self.dir) if 'sqlite' in n], [])

    def test_short_options(self):
        # as nsys stats: -r report, -f format, -o output, -q quiet; -h help
        r = self.stats('-r', 'hgtx_sum', '-f', 'json', '-o', self.path('short'), '-q',
                       self.report())
        self.assertEqual(r.stderr, b'')
        data = json.load(open(self.path('short_hgtx_sum.json')))
        self.assertEqual({d['Range'] for d in data}, {':outer', ':inner', ':main'})
        usage = self.stats('-h').stdout.decode()
        for option in ('-r, --report', '-f, --format', '-o, --output', '-q, --quiet',
                       '-h, --help'):
            self.assertIn(option, usage)
        deps = os.path.join(os.path.dirname(STATS), 'asys-deps')
        usage = self.run_cmd([deps, '-h']).stdout.decode()
        for option in ('-f, --format', '-o, --output', '-q, --quiet', '-h, --help'):
            self.assertIn(option, usage)

    def test_report_dir_and_help(self):
        os.mkdir(self.path('reports'))
        with open(self.path('reports/thread_count.sql'), 'w') as f:
            f.write('-- name: thread_count\n-- title: Threads\n-- description: how many\n'
                    'SELECT COUNT(*) AS "Threads" FROM threads;\n')
        rows = list(csv.DictReader(io.StringIO(self.stats(
            '-q', '--report-dir', self.path('reports'), '-r', 'thread_count', '-f', 'csv',
            self.report()).stdout.decode())))
        self.assertEqual(rows, [{'Threads': '3'}])
        listing = self.stats('--help-reports').stdout.decode()
        for name in ['hgtx_sum', 'hgtx_pushpop_trace', 'hgtx_startend_trace', 'report_info']:
            self.assertIn(name, listing)
        one = self.stats('--help-reports', 'nvtx_sum').stdout.decode()
        self.assertIn('hgtx_sum -- HGTX Range Summary', one)
        self.stats('--help-reports', 'nope', expect_rc=2)

    def db_inode(self):
        return os.stat(self.path('rep.sqlite')).st_ino

    def test_cache_is_reused_and_rebuilt(self):
        self.stats(self.report())
        first = self.db_inode()  # a rebuild renames a new file into place
        self.stats(self.report())
        self.assertEqual(self.db_inode(), first)
        self.stats('--force-export', self.report())
        forced = self.db_inode()
        self.assertNotEqual(forced, first)
        # a new recording under the same name rebuilds, no stale-file error
        self.profile([prog('hgtx_threads'), '1', '2', '100'], options=['-t', 'nvtx'])
        self.stats(self.report())
        self.assertNotEqual(self.db_inode(), forced)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':inner']['Instances']), 2)
        # a database from another schema version is rebuilt, not an error
        import sqlite3
        con = sqlite3.connect(self.path('rep.sqlite'))
        con.execute('UPDATE asys_cache SET schema_version = 0')
        con.commit()
        con.close()
        before = self.db_inode()
        self.stats(self.report())
        self.assertNotEqual(self.db_inode(), before)

    def test_sqlite_option(self):
        self.stats('-q', '--sqlite', self.path('other.db'), self.report())
        self.assertTrue(os.path.exists(self.path('other.db')))
        self.assertFalse(os.path.exists(self.path('rep.sqlite')))

    def test_asys_stats_alias(self):
        r = self.run_cmd([ASYS, 'stats', '-q', '-r', 'hgtx_sum', '-f', 'csv', self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(b'Time (%),'))


class ProfileCli(AsysTestCase):
    def test_launcher_links_neither_sqlite_nor_the_cxx_runtime(self):
        # asys links libasys-common only: the analysis side (SQLite, the C++
        # demangler) stays out of the program that runs every recording
        out = subprocess.run(['ldd', ASYS], capture_output=True, check=True).stdout.decode()
        if 'libasan' in out:  # the sanitizers' runtime is C++: look at asys's own needs
            out = subprocess.run(['readelf', '-d', ASYS], capture_output=True,
                                 check=True).stdout.decode()
            self.assertIn('NEEDED', out)
        self.assertNotIn('libstdc++', out)
        self.assertNotIn('libsqlite3', out)

    def test_default_report_names(self):
        for expected in ['report1.asys-rep', 'report2.asys-rep']:
            r = self.run_cmd([ASYS, 'profile', '-t', 'none', 'true'])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(expected.encode(), r.stderr)
            self.assertTrue(os.path.exists(self.path(expected)))

    def test_unavailable_collectors_are_reported_and_recorded(self):
        r = self.profile(['true'])  # default -t hggc,hgtx,acdnn,acblas: all built (issue 24)
        err = r.stderr.decode()
        self.assertEqual(err.count('not built into this asys yet'), 0, err)
        m = self.manifest()
        if os.path.exists(os.path.join(BIN, '..', 'lib', 'libasys-acompute.so')):
            self.assertEqual(m['collectors']['enabled'],
                             ['hggc', 'hgtx', 'acdnn', 'acblas', 'cpu-sampling', 'python'])
            self.assertEqual(m['collectors'].get('unavailable', []), [])
        else:  # built without cudnn.h/cublas headers: said, recorded as unavailable
            self.assertEqual([u['name'] for u in m['collectors']['unavailable']],
                             ['acdnn', 'acblas'])
        # built since issue 27.1: an option like any other, nothing unavailable
        r = self.profile(['true'], options=['--multi-node-mode', 'false', '-t', 'nvtx'])
        self.assertNotIn('not implemented', r.stderr.decode())
        m = self.manifest()
        self.assertNotIn('multi-node-mode', [u['name'] for u in m['collectors']['unavailable']])
        self.assertIs(m['options']['multi-node-mode'], False)

    def test_manifest_contents(self):
        self.profile([prog('hgtx_threads'), '1', '1', '10'], options=['-t', 'nvtx'])
        m = self.manifest()
        self.assertEqual(m['format_version'], 2)
        self.assertEqual(len(m['report_id']), 32)
        for key in ['asys_version', 'command', 'options', 'host', 'cpu', 'clock', 'session',
                    'target', 'collectors', 'segments', 'totals']:
            self.assertIn(key, m)
        self.assertGreaterEqual(m['clock']['pair_count'], 2)
        self.assertEqual(m['target']['exit_code'], 0)
        self.assertIn('realtime_minus_monotonic_ns', m['clock'])
        self.assertEqual(sum(s['records'] for s in m['segments']), m['totals']['records'])

    def test_help(self):
        r = self.run_cmd([ASYS, 'profile', '--help'])
        self.assertEqual(r.returncode, 0)
        self.assertIn(b'--python-functions-trace', r.stdout)
        # every line fits 100 columns, long option names included (issue 31.16)
        wide = [l for l in r.stdout.decode().splitlines() if len(l) > 100]
        self.assertEqual(wide, [])
        r = self.run_cmd([ASYS, '--version'])
        self.assertTrue(r.stdout.startswith(b'asys '))
        # every tool and command answers --version the same (issue 29.4)
        version = r.stdout.split()[1]
        for argv, name in [([ASYS, 'profile'], b'asys'), ([ASYS, 'finalize'], b'asys'),
                           ([ASYS, 'dump'], b'asys'), ([STATS], b'asys-stats'),
                           ([os.path.join(BIN, 'asys-export')], b'asys-export'),
                           ([os.path.join(BIN, 'asys-deps')], b'asys-deps')]:
            r = self.run_cmd(argv + ['--version'])
            self.assertEqual((r.returncode, r.stdout), (0, name + b' ' + version + b'\n'), argv)
        r = self.run_cmd([ASYS, 'nonsense'])
        self.assertEqual(r.returncode, 2)

    def test_report_info_wraps_in_the_column_format(self):
        # its reasons and notes made it over 250 columns wide (issue 31.16)
        self.profile([prog('hgtx_loop'), '10'], ['-t', 'nvtx', '-s', 'process-tree'])
        env = dict(self.env, COLUMNS='100')
        r = self.run_cmd([STATS, '-r', 'report_info', self.report()], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual([l for l in lines if len(l) > 100], [])
        self.assertIn('Report', r.stdout.decode())

    def test_finalize_recovers_a_kept_session(self):
        env = dict(self.env, ASYS_KEEP_SESSION='1')
        r = self.run_cmd([ASYS, 'profile', '-t', 'nvtx', '-o', self.path('first'),
                          prog('hgtx_loop'), '50'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        session = [n for n in os.listdir(self.dir) if n.startswith('asys-')][0]
        r = self.run_cmd([ASYS, 'finalize', self.path(session), '-o', self.path('again')])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'again')}
        self.assertEqual(int(rows[':r']['Instances']), 50)
        # without -o: the name the recording had, not recovered.asys-rep (issue 28.1)
        r = self.run_cmd([ASYS, 'finalize', self.path(session)])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot write '%s': file exists" % self.report('first'), r.stderr.decode())
        os.unlink(self.report('first'))
        r = self.run_cmd([ASYS, 'finalize', self.path(session)], env=dict(self.env))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(self.report('first')))
        self.assertFalse(os.path.exists(self.path('recovered.asys-rep')))



class NsysAliases(AsysTestCase):
    """Issue 28.4: nsys's spellings of the manual's options record the same
    report options as the asys spellings, and --help names them."""

    PAIRS = [
        (['-c', 'hgtx', '--nvtx-capture', 'step@*'], ['-c', 'hgtx', '--hgtx-capture', 'step@*']),
        (['--cuda-memory-usage', 'true'], ['--hggc-memory-usage', 'true']),
        (['--cuda-graph-trace=graph'], ['--hggc-graph-trace=graph']),
        (['--cudabacktrace', 'all:5000'], ['--hggcbacktrace', 'all:5000']),
        (['--gpu-metrics-devices', 'none'], ['--ppu-metrics-device', 'none']),
        (['--gpu-metrics-set', 'summary'], ['--ppu-metrics-set', 'summary']),
        (['--gpu-metrics-frequency', '100'], ['--ppu-metrics-frequency', '100']),
        (['--python-backtrace=cuda'], ['--python-backtrace=hggc']),
        (['--sampling-frequency', '500'], ['--sample-frequency', '500']),
        (['--sampling-period', '100000'], ['--sample-period', '100000']),
    ]

    def options_of(self, extra, name):
        self.profile(['true'], options=['-t', 'hggc,nvtx', '-s', 'none', *extra], name=name)
        m = self.manifest(name)['options']
        m.pop('output')
        m['given'] = [g for g in m['given'] if g['name'] != 'output']
        return m

    def test_each_alias_records_what_its_asys_spelling_does(self):
        for i, (nsys, ours) in enumerate(self.PAIRS):
            self.assertEqual(self.options_of(nsys, 'n%d' % i), self.options_of(ours, 'a%d' % i),
                             nsys)
        r = self.run_cmd([ASYS, 'profile', '--help'])
        for nsys, _ in self.PAIRS[:7]:
            self.assertIn('(nsys: ' + [a for a in nsys if a.startswith('--')][0].split('=')[0],
                          r.stdout.decode())
        r = self.run_cmd([ASYS, 'profile', '--cuda-graph-trace=nonsense', 'true'])
        self.assertEqual(r.returncode, 2)
        self.assertIn(b'--hggc-graph-trace', r.stderr)

class NsysSamplingOptions(AsysTestCase):
    """Issue 28.4: nsys's --sampling-frequency and --cpuctxsw on the CPU
    sampling collector (scheduling comes from its events, so --cpuctxsw is
    none or the scope of -s)."""

    def info(self, options, name):
        self.profile([prog('cpu_burn_nofp'), 'hot', '300'], options=['-t', 'none', *options], name=name)
        return {r['Property']: r['Value'] for r in self.stats_rows('report_info', name)}

    def test_frequency_sets_the_period(self):
        info = self.info(['--sampling-frequency', '500'], 'f')
        line = info['CPU sampling']
        # cpu-clock: exactly 1/500 s; cycles: the rate at the nominal frequency
        match = re.search(r'cpu-clock every (\d+) ns|cycles every (\d+) cycles', line)
        self.assertTrue(match, line)
        if match.group(1):
            self.assertEqual(int(match.group(1)), 2000000)
        else:
            mhz = int(re.search(r'(\d+) MHz', line).group(1))
            self.assertEqual(int(match.group(2)), mhz * 1000000 // 500)
        r = self.run_cmd([ASYS, 'profile', '--sampling-frequency', '100', '--sample-period', '5',
                          'true'])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.decode().strip().splitlines(),
                         ['asys profile: --sample-period and --sample-frequency cannot be used '
                          'together'])

    def test_cpuctxsw(self):
        info = self.info(['--cpuctxsw', 'none'], 'n')
        self.assertIn('no scheduling: --cpuctxsw none', info['Context switches'])
        self.assertTrue(info['Context switches'].startswith('0 '), info['Context switches'])
        self.assertGreater(int(info['CPU samples'].split()[0]), 0)
        info = self.info(['--cpuctxsw', 'process-tree'], 'p')
        self.assertNotIn('--cpuctxsw', info['Context switches'])
        r = self.run_cmd([ASYS, 'profile', '--cpuctxsw', 'system-wide', 'true'])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.decode().strip().splitlines(),
                         ['asys profile: --cpuctxsw system-wide needs -s system-wide: asys '
                          'records scheduling with the CPU sampling events'])
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('asys-')], [])


class NsysStats(AsysTestCase):
    """Issue 28.5: the nsys reports that were missing, -f as a list, one JSON
    document for several reports, --help-formats, an analysis database as
    input, SKIPPED with exit 0 and an unknown report exit 2 in every tool."""

    def setUp(self):
        super().setUp()
        simppu = os.path.join(os.path.dirname(BIN), 'simppu', 'simppu-run')
        r = self.run_cmd([simppu, ASYS, 'profile', '-t', 'hggc,hgtx', '-s', 'none', '-o',
                          self.path('rep'), prog('hggc_workload'), 'all'])
        self.assertEqual(r.returncode, 0, r.stderr.decode())

    def rows(self, report, *extra):
        r = self.stats('-q', '-r', report, '-f', 'csv', *extra, self.report())
        return list(csv.DictReader(io.StringIO(r.stdout.decode())))

    def total(self, rows, **where):
        return sum(int(r['Total Time (ns)']) for r in rows
                   if all(r[k] == v for k, v in where.items()))

    def test_the_added_reports_agree_with_the_ones_there(self):
        kernels = self.total(self.rows('cuda_gpu_kern_sum'))
        memory = self.total(self.rows('cuda_gpu_mem_time_sum'))
        api = self.total(self.rows('cuda_api_sum'))
        gpu = self.rows('cuda_gpu_sum')
        self.assertEqual(self.total(gpu, Category='CUDA_KERNEL'), kernels)
        self.assertEqual(self.total(gpu, Category='MEMORY_OPER'), memory)
        both = self.rows('cuda_api_gpu_sum')
        self.assertEqual(self.total(both, Category='CUDA_API'), api)
        self.assertEqual(self.total(both, Category='CUDA_KERNEL'), kernels)
        ranges = self.rows('nvtx_sum')
        self.assertEqual(self.total(self.rows('nvtx_pushpop_sum')),
                         self.total(ranges, Style='PushPop'))
        self.assertEqual(self.total(self.rows('nvtx_startend_sum')),
                         self.total(ranges, Style='StartEnd'))

    def test_nvtx_name_prefixes_kernels_with_their_range(self):
        # nsys's :nvtx-name: RANGE:kernel, kernels outside any range as they are;
        # each range's kernels add up to its --group-by hgtx row
        named = self.rows('cuda_gpu_kern_sum:nvtx-name')
        grouped = {r['Name']: int(r['Total Time (ns)'])
                   for r in self.rows('cuda_gpu_kern_sum', '--group-by', 'hgtx')}
        plain = {r['Name'] for r in self.rows('cuda_gpu_kern_sum')}
        per_range = {}
        for r in named:
            range_text, sep, kernel = r['Name'].partition(':')
            if sep and kernel in plain and ':' + range_text in grouped:
                per_range[':' + range_text] = per_range.get(':' + range_text, 0) + \
                    int(r['Total Time (ns)'])
            else:
                self.assertIn(r['Name'], plain)
                per_range['[no HGTX range]'] = per_range.get('[no HGTX range]', 0) + \
                    int(r['Total Time (ns)'])
        self.assertEqual(per_range, grouped)
        self.assertGreater(len(per_range), 1)
        # with :base, and in the GPU summaries: the same prefixes
        base = self.rows('cuda_gpu_kern_sum:nvtx-name:base')
        self.assertEqual(sum(int(r['Total Time (ns)']) for r in base), sum(grouped.values()))
        kernels = {r['Name'] for r in named}
        for report in ('cuda_gpu_sum:nvtx-name', 'cuda_api_gpu_sum:nvtx-name'):
            ops = {r['Operation'] for r in self.rows(report) if r['Category'] == 'CUDA_KERNEL'}
            self.assertEqual(ops, kernels, report)
        r = self.stats('-r', 'cuda_gpu_kern_sum:base:mangled', self.report(), expect_rc=2)
        self.assertIn(b"takes one of base, mangled, nvtx-name (got 'base:mangled')", r.stderr)

    def test_formats(self):
        r = self.stats('-q', '-r', 'hggc_kern_sum,hgtx_sum,pccl_sum', '-f', 'json', self.report())
        doc = json.loads(r.stdout)  # one document
        self.assertEqual(sorted(doc), ['hggc_kern_sum', 'hgtx_sum', 'pccl_sum'])
        self.assertEqual(doc['pccl_sum'], [])
        self.assertEqual(len(doc['hggc_kern_sum']), len(self.rows('hggc_kern_sum')))
        self.assertIn(b'SKIPPED', r.stderr)
        r = self.stats('-q', '-r', 'hggc_kern_sum,hgtx_sum', '-f', 'csv,column', self.report())
        out = r.stdout.decode()
        self.assertTrue(out.startswith('Time (%),Total Time (ns),'), out[:80])
        self.assertIn(' ** HGTX Range Summary (hgtx_sum):', out)
        r = self.stats('-q', '-r', 'hggc_kern_sum', '-f', 'csv,json', self.report(), expect_rc=2)
        self.assertIn(b'--format lists 2 formats for 1 reports', r.stderr)
        r = self.stats('--help-formats')
        for name in (b'column', b'table', b'csv', b'tsv', b'json'):
            self.assertIn(b'  ' + name + b' ', r.stdout)

    def test_skipped_and_unknown_reports_exit_alike(self):
        r = self.stats('-q', '-r', 'pccl_sum', self.report())
        self.assertIn("SKIPPED: '%s' has no data for this report: no PCCL" % self.report(),
                      r.stdout.decode())
        export = os.path.join(BIN, 'asys-export')
        r = self.run_cmd([export, '-q', '-t', 'csv', '-r', 'pccl_sum,hggc_kern_sum', '-o',
                          self.path('x'), self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertTrue(os.path.exists(self.path('x_hggc_kern_sum.csv')))
        self.assertFalse(os.path.exists(self.path('x_pccl_sum.csv')))
        for argv in ([STATS, '-r', 'nope'], [export, '-t', 'csv', '-r', 'nope']):
            r = self.run_cmd(argv + [self.report()])
            self.assertEqual(r.returncode, 2, argv)

    def test_filter_nvtx_is_that_range_instance(self):
        inside = {r['Name']: int(r['Instances'])
                  for r in self.rows('hggc_kern_sum', '--filter-nvtx', 'graphs')}
        want = {}
        for r in self.rows('hgtx_kern_sum'):
            if r['Range'] == ':graphs':
                want[r['Kernel Name']] = want.get(r['Kernel Name'], 0) + int(r['Kern Inst'])
        self.assertEqual(inside, want)
        self.assertEqual(self.rows('hggc_kern_sum', '--filter-nvtx', 'graphs@*/0'),
                         self.rows('hggc_kern_sum', '--filter-nvtx', 'graphs'))
        for spec, rc, said in [('graphs/1', 1, "no HGTX range 'graphs' in the default domain, "
                                               "instance 1"),
                               ('graphs@nodomain', 1, "in domain 'nodomain'"),
                               ('graphs/x', 2, 'takes RANGE[@DOMAIN][/N]')]:
            r = self.stats('-q', '-r', 'hggc_kern_sum', '--filter-nvtx', spec, self.report(),
                           expect_rc=rc)
            lines = r.stderr.decode().strip().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(said, lines[0])

    def test_an_analysis_database_as_input(self):
        from_report = self.stats('-q', '-r', 'hggc_kern_sum', self.report()).stdout
        db = self.path('rep.sqlite')
        self.assertEqual(self.stats('-q', '-r', 'hggc_kern_sum', db).stdout, from_report)
        with open(self.path('other.sqlite'), 'wb') as f:
            f.write(b'SQLite format 3\0' + bytes(4080))
        r = self.stats('-q', self.path('other.sqlite'), expect_rc=1)
        self.assertIn(b'not an asys analysis database', r.stderr)

class OutputPatterns(AsysTestCase):
    """Issue 28.1: -o expands %h %p %n %q{ENV} %% as nsys does."""

    def record(self, pattern, env=None, expect_rc=0):
        r = self.run_cmd([ASYS, 'profile', '-t', 'none', '-s', 'none', '-o', pattern,
                          prog('hgtx_loop'), '10'], env=env)
        self.assertEqual(r.returncode, expect_rc, r.stderr.decode())
        return r

    def test_every_pattern(self):
        env = dict(self.env, RUN_TAG='t7')
        self.record('r_%h_%p_%q{RUN_TAG}_%%_%n', env=env)
        self.record('r_%h_%p_%q{RUN_TAG}_%%_%n', env=env)
        host = os.uname().nodename
        made = sorted(n for n in os.listdir(self.dir) if n.startswith('r_'))
        self.assertEqual(len(made), 2, made)
        pids = []
        for n, seq in zip(made, ('1', '2')):
            head = 'r_%s_' % host
            self.assertTrue(n.startswith(head), n)
            pid, tag, percent, last = n[len(head):-len('.asys-rep')].split('_')
            self.assertEqual((tag, percent), ('t7', '%'))
            pids.append(int(pid))
        # %p is the launched program's pid, as the manifest has it
        for n, pid in zip(made, pids):
            rows = self.run_cmd([STATS, '-q', '-r', 'report_info', '-f', 'csv', n]).stdout
            self.assertIn(str(pid).encode(), rows)
        # %n counts up until the name is free (with %p the names differ already)
        self.assertEqual([n.split('_')[-1] for n in made], ['1.asys-rep', '1.asys-rep'])
        self.record('seq_%n')
        self.record('seq_%n')
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith('seq_')),
                         ['seq_1.asys-rep', 'seq_2.asys-rep'])

    def test_refused_patterns(self):
        r = self.record('x_%q{ASYS_NO_SUCH_VARIABLE}', expect_rc=2)
        self.assertIn("environment variable 'ASYS_NO_SUCH_VARIABLE' of %q{ASYS_NO_SUCH_VARIABLE} "
                      "is not set", r.stderr.decode())
        r = self.record('x_%z', expect_rc=2)
        self.assertIn("unknown pattern '%z'", r.stderr.decode())
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('x_')], [])

    def test_finalize_uses_the_expanded_name(self):
        env = dict(self.env, ASYS_KEEP_SESSION='1')
        r = self.record('k_%p', env=env)
        kept = r.stderr.decode().split("session kept in '")[1].split("'")[0]
        made = [n for n in os.listdir(self.dir) if n.startswith('k_')]
        self.assertEqual(len(made), 1)
        os.unlink(self.path(made[0]))
        r = self.run_cmd([ASYS, 'finalize', kept, '-o', 'y_%p'])
        self.assertEqual(r.returncode, 2)
        self.assertIn("%p (the profiled program's pid) is not known here", r.stderr.decode())
        r = self.run_cmd([ASYS, 'finalize', kept])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('k_')], made)

if __name__ == '__main__':
    unittest.main(verbosity=2)
