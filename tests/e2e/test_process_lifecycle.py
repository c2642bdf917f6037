"""Children, crashes, kills, signals, and the program's own I/O and status."""
import os
import shutil
import re
import signal
import subprocess
import sys
import time
import unittest

from asys_e2e import ASYS, AsysTestCase, prog


class ForkAndExec(AsysTestCase):
    def test_children_are_traced(self):
        r = self.profile([prog('hgtx_fork'), prog('hgtx_threads'), '2', '3', '100'],
                         options=['-t', 'nvtx'])
        self.assertIn(b'children 0 0', r.stdout)
        con = self.db()
        procs = con.execute("SELECT s.value, p.forked FROM processes p "
                            "JOIN strings s ON s.id = p.name_id ORDER BY s.value, p.forked").fetchall()
        self.assertEqual(procs, [('hgtx_fork', 0), ('hgtx_fork', 1), ('hgtx_threads', 0)])
        rows = {r['Range']: int(r['Instances']) for r in self.stats_rows('hgtx_sum')}
        # the fork child used the parent's registered string and domain
        self.assertEqual(rows['forkdom:inherited-name'], 4)
        self.assertEqual(rows[':child-own'], 1)
        self.assertEqual(rows[':parent'], 1)
        # the exec'd program's ranges
        self.assertEqual(rows[':outer'], 6)
        self.assertEqual(rows[':main'], 1)
        per_pid = dict(con.execute(
            "SELECT s.value, COUNT(DISTINCT e.pid) FROM hgtx_events e "
            "JOIN strings s ON s.id = e.text_id GROUP BY s.value"))
        self.assertEqual(per_pid['inherited-name'], 1)
        self.assertEqual(self.fork_child_cmdline(r), self.kernel_cmdline(r))

    def fork_child_cmdline(self, r):
        rows = self.db().execute("SELECT c.value FROM processes p JOIN strings c "
                                 "ON c.id = p.cmdline_id WHERE p.forked = 1").fetchall()
        self.assertEqual(len(rows), 1, rows)
        return rows[0][0]

    def kernel_cmdline(self, r):
        """What the fork child read in /proc/self/cmdline, as a process's
        command line is kept (NULs as spaces, none at the end)."""
        raw = bytes.fromhex(re.search(rb'cmdline ([0-9a-f]*)', r.stdout).group(1).decode())
        return raw.rstrip(b'\0').replace(b'\0', b' ').decode(errors='replace')

    def test_fork_child_command_line_after_a_new_title(self):
        # the fork child's command line is the argument area as /proc reads it
        # then: rewritten in place; once the area's last NUL is gone the kernel
        # takes it for one title, cut at its first NUL
        for title in ('same', 'long'):
            self.env['HGTX_FORK_TITLE'] = title
            r = self.profile([prog('hgtx_fork'), prog('hgtx_threads'), '2', '3', '100'],
                             options=['-t', 'nvtx', '-s', 'none'])
            cmdline = self.fork_child_cmdline(r)
            self.assertTrue(cmdline.startswith('TTTT'), cmdline)
            self.assertEqual(cmdline, self.kernel_cmdline(r), title)
            if title == 'long':
                self.assertNotIn('hgtx_threads', cmdline)

    def test_fork_children_before_exec_can_be_left_out(self):
        # --trace-fork-before-exec false (nsys's default): the fork child that
        # never execs is not recorded, the one that execs is, from its exec on
        r = self.profile([prog('hgtx_fork'), prog('hgtx_threads'), '2', '3', '100'],
                         options=['-t', 'nvtx', '-s', 'none', '--trace-fork-before-exec', 'false'])
        self.assertIn(b'children 0 0', r.stdout)
        self.assertIs(self.manifest()['options']['trace-fork-before-exec'], False)
        procs = self.db().execute("SELECT s.value, p.forked FROM processes p JOIN strings s "
                                  "ON s.id = p.name_id ORDER BY s.value, p.forked").fetchall()
        self.assertEqual(procs, [('hgtx_fork', 0), ('hgtx_threads', 0)])
        rows = {r['Range']: int(r['Instances']) for r in self.stats_rows('hgtx_sum')}
        self.assertNotIn('forkdom:inherited-name', rows)
        self.assertNotIn(':child-own', rows)
        self.assertEqual(rows[':parent'], 1)
        self.assertEqual(rows[':outer'], 6)


    def test_processes_are_named_after_the_file_that_runs(self):
        # the injected library reads the path exec was given (AT_EXECFN) and
        # follows its links itself; a script is named after its interpreter
        target = prog('hgtx_threads')
        os.symlink(target, self.path('link2'))
        os.symlink('link2', self.path('link1'))  # relative: beside the link
        script = self.path('script.sh')
        with open(script, 'w') as f:
            f.write('#!/bin/sh\n%s 1 1 1\n' % self.path('link1'))
        os.chmod(script, 0o755)
        self.profile([script], options=['-t', 'nvtx', '-s', 'none'])
        procs = self.db().execute("SELECT s.value, e.value FROM processes p "
                                  "JOIN strings s ON s.id = p.name_id "
                                  "JOIN strings e ON e.id = p.exe_id ORDER BY s.value").fetchall()
        shell = os.path.basename(os.path.realpath('/bin/sh'))
        self.assertEqual(sorted(name for name, _ in procs), sorted(['hgtx_threads', shell]))
        for name, exe in procs:  # the same file as the kernel's /proc/PID/exe
            self.assertTrue(os.path.samefile(exe, target if name == 'hgtx_threads' else '/bin/sh'),
                            (name, exe))


class CrashAndKill(AsysTestCase):
    def test_segfault_keeps_completed_ranges(self):
        r = self.profile([prog('hgtx_crash'), '250'], options=['-t', 'nvtx'], expect_rc=128 + 11)
        self.assertIn(b'terminated by signal 11', r.stderr)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':before-crash']['Instances']), 250)
        con = self.db()
        open_ranges = con.execute(
            "SELECT s.value FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
            "WHERE e.end_ns IS NULL").fetchall()
        self.assertEqual(open_ranges, [('dying',)])
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(info['Program ended'], 'signal 11')

    def start_sleeper(self, count):
        p = subprocess.Popen([ASYS, 'profile', '-t', 'nvtx', '-o', self.path('rep'), '-f',
                              prog('hgtx_sleeper'), str(count)], cwd=self.dir, env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = p.stdout.readline().decode()
        self.assertTrue(line.startswith('ready '), line)
        return p, int(line.split()[1])

    def test_sigkill_from_outside_keeps_completed_ranges(self):
        p, pid = self.start_sleeper(300)
        os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + 9, err)
        self.assertNoSessionLeft()
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':before-kill']['Instances']), 300)
        con = self.db()
        self.assertEqual(con.execute("SELECT COUNT(*) FROM hgtx_events WHERE end_ns IS NULL").fetchone()[0], 1)

    def test_sigterm_to_asys_is_forwarded(self):
        p, pid = self.start_sleeper(10)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 7, err)  # the program's SIGTERM handler exits 7
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':waiting']['Instances']), 1)  # closed by the handler
        self.assertEqual(int(rows[':before-kill']['Instances']), 10)

    def test_sigint_from_a_process_is_forwarded(self):
        p, pid = self.start_sleeper(5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 128 + 2, err)
        self.assertTrue(os.path.exists(self.report()))


class IgnoredSignals(AsysTestCase):
    """A program that ignores the interrupt (issue 32.8): a second one sends
    it SIGTERM, a third SIGKILL, each said; the report is written."""
    IGNORES = ('import signal, sys, time\n'
               'for s in sys.argv[1:]: signal.signal(getattr(signal, s), signal.SIG_IGN)\n'
               'print("ready", flush=True)\n'
               'time.sleep(120)\n')

    def run_ignoring(self, ignored, interrupts):
        p = subprocess.Popen([ASYS, 'profile', '-t', 'none', '-s', 'none', '-o', self.path('rep'),
                              sys.executable, '-c', self.IGNORES] + ignored, cwd=self.dir,
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), b'ready\n')
        for sig in interrupts:
            p.send_signal(sig)
            time.sleep(0.5)
        out, err = p.communicate(timeout=60)
        self.assertTrue(os.path.exists(self.report()), err)
        self.assertNoSessionLeft()
        return p.returncode, err.decode()

    def test_the_second_interrupt_sends_sigterm(self):
        rc, err = self.run_ignoring(['SIGINT'], [signal.SIGINT, signal.SIGINT])
        self.assertEqual(rc, 128 + signal.SIGTERM, err)
        self.assertIn('interrupted again: sending SIGTERM to the program', err)

    def test_the_third_sends_sigkill(self):
        rc, err = self.run_ignoring(['SIGINT', 'SIGTERM'],
                                    [signal.SIGINT, signal.SIGINT, signal.SIGTERM])
        self.assertEqual(rc, 128 + signal.SIGKILL, err)
        self.assertIn('sending SIGTERM', err)
        self.assertIn('sending SIGKILL to the program', err)


class ProgramIO(AsysTestCase):
    def test_stdio_and_exit_status_untouched(self):
        data = b'line one\nline two\n' * 1000
        plain = self.run_cmd([prog('io_echo'), '5'], input=data)
        traced = self.profile([prog('io_echo'), '5'], expect_rc=5, input=data)
        self.assertEqual(plain.returncode, 5)
        self.assertEqual(traced.stdout, plain.stdout)
        # asys adds only lines of its own, prefixed
        program_lines = [l for l in traced.stderr.splitlines() if not l.startswith(b'asys')]
        self.assertEqual(program_lines, plain.stderr.splitlines())

    def test_wait_primary_returns_when_the_program_ends(self):
        script = 'sleep 30 >/dev/null 2>&1 </dev/null & echo $! > bg.pid; echo first'
        start = time.monotonic()
        r = self.profile(['sh', '-c', script], options=['--wait', 'primary', '-t', 'none'])
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual(r.stdout.strip(), b'first')
        with open(self.path('bg.pid')) as f:
            bg = int(f.read())
        os.kill(bg, signal.SIGKILL)
        # issue 32.4: the process that ran on is named on the last line and in
        # the report; its name is the one it had then: 'sh' while the shell's
        # child has not yet exec'd sleep
        last = r.stderr.decode().strip().splitlines()[-1]
        self.assertRegex(last, r'1 process was still running when the report was written '
                         r'\(--wait primary\): %d \((sleep|sh)\)' % bg)
        info = {row['Property']: row['Value'] for row in self.stats_rows('report_info')}
        self.assertRegex(info['Processes still running at the end'], r'1: %d \((sleep|sh)\)' % bg)

    def test_wait_all_waits_for_descendants(self):
        script = '(sleep 1; echo late) & echo first'
        r = self.profile(['sh', '-c', script], options=['-t', 'none'])
        self.assertEqual(r.stdout.split(), [b'first', b'late'])



class Environment(AsysTestCase):
    def test_ld_preload_is_prepended(self):
        # (the variable reaches asys too: an ASan build of asys must not object to it)
        env = dict(self.env, LD_PRELOAD='libm.so.6', ASAN_OPTIONS='verify_asan_link_order=0')
        r = self.run_cmd([ASYS, 'profile', '-t', 'none', '-o', self.path('rep'),
                          'sh', '-c', 'echo "$LD_PRELOAD|$NVTX_INJECTION64_PATH"'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        preload, injection = r.stdout.decode().strip().split('|')
        first, rest = preload.split(':', 1)
        self.assertTrue(re.search(r'/libasys-inject(\+[a-z]+)*\.so$', first), preload)
        self.assertEqual(rest, 'libm.so.6')
        self.assertEqual(injection, first)

    def test_ld_preload_given_with_e_comes_after_the_recorder(self):
        env = dict(self.env, LD_PRELOAD='libm.so.6', ASAN_OPTIONS='verify_asan_link_order=0')
        r = self.run_cmd([ASYS, 'profile', '-t', 'none', '-o', self.path('rep'),
                          '-e', 'LD_PRELOAD=libdl.so.2,ASYS_TEST_VAR=1',
                          'sh', '-c', 'echo "$LD_PRELOAD|$ASYS_TEST_VAR"'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        preload, var = r.stdout.decode().strip().split('|')
        self.assertEqual(preload.split(':')[1:], ['libm.so.6', 'libdl.so.2'], preload)
        self.assertTrue(re.search(r'/libasys-inject(\+[a-z]+)*\.so$', preload.split(':')[0]))
        self.assertEqual(var, '1')

    def test_closing_every_descriptor_does_not_stop_recording(self):
        # 300k pairs need several chunks, grown after the program closed everything
        self.profile([prog('hgtx_loop'), '300000', 'close-fds'], options=['-t', 'nvtx'])
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':r']['Instances']), 300000)
        self.assertEqual(self.manifest()['totals']['dropped_records'], 0)

    def test_relative_tmpdir_and_changing_directory(self):
        os.mkdir(self.path('rel'))
        env = dict(self.env, TMPDIR='rel')
        r = self.run_cmd([ASYS, 'profile', '-t', 'nvtx', '-o', self.path('rep'), 'sh', '-c',
                          'cd / && exec %s 300000' % prog('hgtx_loop')], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':r']['Instances']), 300000)
        self.assertEqual(os.listdir(self.path('rel')), [])

    def test_monotonic_clock_fallback(self):
        env = dict(self.env, ASYS_CLOCK='monotonic')
        r = self.run_cmd([ASYS, 'profile', '-t', 'nvtx', '-o', self.path('rep'),
                          prog('hgtx_threads'), '2', '5', '2000'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.manifest()['clock']['kind'], 'monotonic')
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows[':inner']['Instances']), 10)
        self.assertGreaterEqual(int(rows[':inner']['Min (ns)']), 2000000)
        self.assertLess(float(rows[':inner']['Avg (ns)']), 2000000 + 20000000)

    def test_installed_layout(self):
        from asys_e2e import BUILD
        prefix = self.path('prefix')
        r = self.run_cmd(['cmake', '--install', BUILD, '--prefix', prefix])
        self.assertEqual(r.returncode, 0, r.stderr)
        for f in ['bin/asys', 'bin/asys-stats', 'lib/libasys-inject.so',
                  'lib/libasys-inject+osrt.so']:
            self.assertTrue(os.path.exists(os.path.join(prefix, f)), f)
        r = self.run_cmd([os.path.join(prefix, 'bin', 'asys'), 'profile', '-t', 'nvtx,osrt', '-o',
                          self.path('inst'), prog('hgtx_loop'), '10'])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_cmd([os.path.join(prefix, 'bin', 'asys-stats'), '-f', 'csv', self.report('inst')])
        self.assertIn(b':r', r.stdout)



class RunControl(AsysTestCase):
    """Issue 28.2: --duration with --kill, -x, -e, -w, --stats, --export, as
    nsys has them, recorded in the manifest."""

    def given(self):
        return self.manifest()['options']

    def test_duration_ends_the_recording_and_kill_says_what_the_program_gets(self):
        start = time.monotonic()
        r = self.profile(['sleep', '30'], options=['-t', 'osrt', '-s', 'none', '--duration', '1'],
                         expect_rc=128 + signal.SIGTERM)
        self.assertLess(time.monotonic() - start, 10)
        self.assertIn(b'terminated by signal 15', r.stderr)
        self.assertEqual(str(self.given()['duration']), '1')
        self.profile(['sleep', '30'], options=['-s', 'none', '--duration', '1', '--kill', 'sigkill'],
                     expect_rc=128 + signal.SIGKILL)
        # none: the report is written at the end of the duration, the program
        # goes on and its exit status is asys's
        script = 'sleep 3; echo done > finished'
        start = time.monotonic()
        r = self.profile(['sh', '-c', script], options=['-s', 'none', '--duration', '1',
                                                          '--kill', 'none'])
        self.assertGreater(time.monotonic() - start, 2.5)
        self.assertIn(b'--duration ended the recording; the program goes on', r.stderr)
        self.assertTrue(os.path.exists(self.path('finished')))
        end = int(self.manifest()['session']['end_monotonic_ns'])
        begin = int(self.manifest()['session']['start_monotonic_ns'])
        self.assertLess((end - begin) / 1e9, 2.5)

    def test_stop_on_exit_false_records_to_the_end_of_the_duration(self):
        start = time.monotonic()
        self.profile(['true'], options=['-s', 'none', '-x', 'false', '--duration', '2'])
        self.assertGreater(time.monotonic() - start, 1.9)

    def test_environment_output_stats_and_exports(self):
        script = 'echo "$FOO/$BAZ"; echo to-stderr >&2; %s 10' % prog('hgtx_loop')
        r = self.profile(['sh', '-c', script], options=['-t', 'nvtx', '-s', 'none',
                                                          '-e', 'FOO=bar,BAZ=1=2'])
        self.assertEqual(r.stdout, b'bar/1=2\n')
        r = self.profile(['sh', '-c', script],
                         options=['-t', 'nvtx', '-s', 'none', '-w', 'false', '--stats=true',
                                  '--export=sqlite,json'])
        self.assertNotIn(b'to-stderr', r.stderr)
        self.assertIn(b'HGTX Range Summary (hgtx_sum)', r.stdout)  # the only stdout: the stats
        self.assertTrue(os.path.exists(self.path('rep.json')))
        self.assertTrue(os.path.exists(self.path('rep.sqlite')))
        given = self.given()
        self.assertEqual((given['show-output'], given['stats'], given['export']),
                         (False, True, 'sqlite,json'))

    def test_refused(self):
        for options, said in [(['--duration', '0'], '--duration'),
                              (['--kill', 'sigfoo'], '--kill takes none, sigterm, sigkill'),
                              (['-x', 'false'], '--stop-on-exit=false needs --duration'),
                              (['-e', 'NOEQUALS'], '--env-var takes NAME=VALUE'),
                              (['--export', 'pdf'], '--export')]:
            r = self.run_cmd([ASYS, 'profile', *options, 'true'])
            self.assertEqual(r.returncode, 2, options)
            lines = r.stderr.decode().strip().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(said, lines[0])
            self.assertNoSessionLeft()

class LauncherDies(AsysTestCase):
    """asys itself killed (issue 12.11): the program dies with it unless asked
    not to, and the session it leaves is a readable report after finalize."""

    def start(self, *options):
        p = subprocess.Popen([ASYS, 'profile', '-o', self.path('rep'), *options,
                              prog('hgtx_sleeper'), '50'], cwd=self.dir, env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = p.stdout.readline().decode()
        self.assertTrue(line.startswith('ready '), line)
        return p, int(line.split()[1])

    def alive(self, pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return open('/proc/%d/stat' % pid).read().split()[2] != 'Z'

    def test_the_program_dies_with_asys_and_the_session_is_recovered(self):
        p, target = self.start()
        time.sleep(0.3)  # killed well before the launcher's second clock pair
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
        p.stderr.close()
        deadline = time.monotonic() + 10
        while self.alive(target) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(self.alive(target), 'the program outlived asys')
        sessions = [n for n in os.listdir(self.dir) if n.startswith('asys-')]
        self.assertEqual(len(sessions), 1)
        r = self.run_cmd([ASYS, 'finalize', self.path(sessions[0]), '-o', self.path('rec')])
        self.assertEqual(r.returncode, 0, r.stderr)
        shutil.rmtree(self.path(sessions[0]))
        rows = {row['Range']: row for row in self.stats_rows('hgtx_sum', 'rec')}
        self.assertEqual(rows[':before-kill']['Instances'], '50')  # times converted, not refused

    def test_an_early_kill_with_a_sampler_keeps_the_timeline(self):
        # issue 32.5: the recovered clock squeezed every range into 1 us in one
        # run of two, and Duration read 0.02 s: the session now ends at its
        # last record and the rate comes from pairs that agree
        loop = prog('hgtx_loop')
        done = self.path('second-burst-done')
        script = '%s 1000; sleep 0.5; %s 1000; touch %s; exec sleep 30' % (loop, loop, done)
        p = subprocess.Popen([ASYS, 'profile', '-t', 'nvtx', '-s', 'process-tree', '-o',
                              self.path('rep'), 'sh', '-c', script], cwd=self.dir,
                             env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # the kill comes once both bursts ran (a loaded machine starts them late)
        deadline = time.monotonic() + 30
        while not os.path.exists(done) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        time.sleep(0.3)  # the program gets SIGTERM from its parent's death
        sessions = [n for n in os.listdir(self.dir) if n.startswith('asys-')]
        self.assertEqual(len(sessions), 1)
        r = self.run_cmd([ASYS, 'finalize', self.path(sessions[0]), '-o', self.path('rec')])
        self.assertEqual(r.returncode, 0, r.stderr)
        shutil.rmtree(self.path(sessions[0]))
        clock = self.manifest('rec')['clock']
        if clock['kind'] != 'monotonic':
            self.assertTrue(1e6 <= clock['tick_hz'] <= 1e11, clock)
        info = {row['Property']: row['Value'] for row in self.stats_rows('report_info', 'rec')}
        con = self.db('rec')
        first, last = con.execute('SELECT MIN(start_ns), MAX(end_ns) FROM hgtx_events').fetchone()
        # two bursts 0.5 s apart; when not, what each process kept and the
        # clock it was read with (a rare failure under load: one burst, or a
        # squeezed timeline)
        bursts = con.execute('SELECT pid, COUNT(*), MIN(start_ns), MAX(end_ns) FROM hgtx_events '
                             'GROUP BY pid').fetchall()
        self.assertGreater(last - first, 0.4e9, (bursts, clock))
        self.assertGreaterEqual(float(info['Duration (s)']), (last - first) / 1e9)
        self.assertLess(float(info['Duration (s)']), 30)

    def test_kill_on_exit_false_leaves_it_running(self):
        p, target = self.start('--kill-on-exit=false')
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
        p.stderr.close()
        time.sleep(0.5)
        self.assertTrue(self.alive(target))
        os.kill(target, signal.SIGKILL)
        for n in os.listdir(self.dir):
            if n.startswith('asys-'):
                shutil.rmtree(self.path(n))


class DiskFullAtFinalize(AsysTestCase):
    """No room for the report (issue 12.12): the session stays, and the line
    that says how to write the report from it works."""

    def test_the_session_is_kept_and_finalize_recovers_it(self):
        full = self.path('full')
        os.mkdir(full)
        script = ('mount -t tmpfs -o size=64k tmpfs %s || exit 77; exec %s profile -o %s/rep '
                  '%s 500000' % (full, ASYS, full, prog('hgtx_loop')))
        r = self.run_cmd(['unshare', '-m', 'sh', '-c', script])
        if r.returncode == 77:
            self.skipTest('cannot mount a small file system here')
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 1, err)
        self.assertIn('no space left on device', err)
        kept = re.search(r"'asys finalize (\S+) -o", err)
        self.assertIsNotNone(kept, err)
        self.assertTrue(os.path.isdir(kept.group(1)))
        self.assertEqual([n for n in os.listdir(full)], [])  # nothing half-written (a new mount)
        r = self.run_cmd([ASYS, 'finalize', kept.group(1), '-o', self.path('rec')])
        self.assertEqual(r.returncode, 0, r.stderr)
        shutil.rmtree(kept.group(1))
        rows = {row['Range']: row for row in self.stats_rows('hgtx_sum', 'rec')}
        self.assertEqual(rows[':r']['Instances'], '500000')


if __name__ == '__main__':
    unittest.main(verbosity=2)
