"""Driver-API and IPC programs on simppu (issue 31.7): tests/e2e/progs/driver_api.c,
built with the toolkit's cuda.h against simppu's libcuda.so.1
(tests/simppu/libcuda.c), recorded with `asys profile -t hggc`.  Its driver
calls are HGGC calls (api 2) with the CUPTI driver callback ids of their
names, each exactly as often as the program makes it; the runtime calls the
stand-in makes inside them are not the program's and are not recorded; the
device work they cause carries their correlation ids.  And CUDA IPC
(tests/e2e/progs/ipc_workload.c, as NVIDIA's simpleIPC): handles made in one
process and opened in a child, every call recorded in its own process."""
import os
import re
import unittest

from asys_e2e import BUILD, AsysTestCase, prog

SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
CUDA_INCLUDE = os.path.join(os.environ.get('CUDA_HOME', '/usr/local/cuda'), 'include')
RUNTIME_API, DRIVER_API = 1, 2

# the program's calls (driver_api.c), by the names cuda.h maps them to
CALLS = {
    'cuInit': 1, 'cuDriverGetVersion': 1, 'cuDeviceGetCount': 2, 'cuDeviceGet': 2,
    'cuGetErrorName': 1, 'cuDeviceGetName': 1, 'cuDeviceGetAttribute': 3,
    'cuDeviceTotalMem_v2': 1, 'cuCtxCreate_v4': 1, 'cuCtxGetCurrent': 1, 'cuModuleLoadData': 1,
    'cuModuleGetFunction': 2, 'cuOccupancyMaxPotentialBlockSize': 1, 'cuMemAlloc_v2': 3, 'cuMemcpyHtoD_v2': 2, 'cuMemsetD32_v2': 1,
    'cuStreamCreate': 1, 'cuEventCreate': 2, 'cuEventRecord': 2, 'cuLaunchKernel': 4,
    'cuMemcpyDtoHAsync_v2': 1, 'cuStreamSynchronize': 1, 'cuEventSynchronize': 1,
    'cuEventElapsedTime_v2': 1, 'cuMemcpyDtoD_v2': 1, 'cuCtxSynchronize': 1,
    'cuMemcpyDtoH_v2': 1, 'cuGetProcAddress_v2': 5, 'cuMemFree_v2': 3, 'cuEventDestroy_v2': 2,
    'cuStreamDestroy_v2': 1, 'cuModuleUnload': 1, 'cuCtxDestroy_v2': 1,
}
# (name, CUresult) of the calls that fail
FAILED = {('cuDeviceGetCount', 3), ('cuDeviceGet', 101), ('cuLaunchKernel', 1),
          ('cuGetProcAddress_v2', 500)}


def driver_cbids():
    """{name: cbid} from the toolkit's cupti_driver_cbid.h."""
    path = os.path.join(CUDA_INCLUDE, 'cupti_driver_cbid.h')
    with open(path) as f:
        return {name: int(cbid) for name, cbid in
                re.findall(r'CUPTI_DRIVER_TRACE_CBID_(\w+)\s*=\s*(\d+)', f.read())}


@unittest.skipUnless(os.path.exists(os.path.join(CUDA_INCLUDE, 'cupti_driver_cbid.h')),
                     'SKIPPED: no cupti_driver_cbid.h (simppu is built with the toolkit\'s headers)')
class DriverApi(AsysTestCase):
    def setUp(self):
        super().setUp()
        r = self.run_cmd([SIMPPU_RUN, prog('driver_api')])
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))
        self.profile([SIMPPU_RUN, prog('driver_api')], ('-t', 'hggc', '-s', 'none'))

    def calls(self):
        return self.db().execute(
            'SELECT s.value, a.api, a.cbid, a.result, a.correlation_id FROM hggc_api_calls AS a '
            'JOIN strings AS s ON s.id = a.name_id ORDER BY a.start_ns').fetchall()

    def test_every_driver_call_recorded_once(self):
        counts = {}
        for name, api, _, _, _ in self.calls():
            self.assertEqual(api, DRIVER_API, name)  # no runtime call of the stand-in's own
            counts[name] = counts.get(name, 0) + 1
        self.assertEqual(counts, CALLS)

    def test_callback_ids_and_results(self):
        cbids = driver_cbids()
        failed = set()
        for name, _, cbid, result, _ in self.calls():
            self.assertEqual(cbid, cbids[name], name)
            if result:
                failed.add((name, result))
        self.assertEqual(failed, FAILED)

    def test_device_work_carries_the_driver_calls(self):
        db = self.db()
        kernels = db.execute(
            'SELECT s.value, COUNT(*) FROM ppu_kernels AS k JOIN hggc_api_calls AS a '
            'ON a.correlation_id = k.correlation_id JOIN strings AS s ON s.id = a.name_id '
            'GROUP BY s.value').fetchall()
        self.assertEqual(kernels, [('cuLaunchKernel', 3)])
        copies = dict(db.execute(
            'SELECT s.value, COUNT(*) FROM ppu_memcpys AS m JOIN hggc_api_calls AS a '
            'ON a.correlation_id = m.correlation_id JOIN strings AS s ON s.id = a.name_id '
            'GROUP BY s.value').fetchall())
        self.assertEqual(copies, {'cuMemcpyHtoD_v2': 2, 'cuMemcpyDtoHAsync_v2': 1,
                                  'cuMemcpyDtoD_v2': 1, 'cuMemcpyDtoH_v2': 1})
        summary = {row['Name']: int(row['Num Calls'])
                   for row in self.stats_rows('hggc_api_sum')}
        self.assertEqual(summary, CALLS)


# ipc_workload.c: (process, call) -> (calls, failed calls)
IPC_CALLS = {
    ('parent', 'cudaIpcGetMemHandle'): (1, 0), ('parent', 'cudaIpcGetEventHandle'): (1, 0),
    ('parent', 'cudaIpcOpenMemHandle'): (1, 1),  # its own handle: refused
    ('child', 'cudaIpcOpenMemHandle'): (1, 0), ('child', 'cudaIpcOpenEventHandle'): (1, 0),
    ('child', 'cudaIpcCloseMemHandle'): (1, 0),
}


class Ipc(AsysTestCase):
    def test_handles_opened_in_a_child(self):
        self.profile([SIMPPU_RUN, prog('ipc_workload')], ('-t', 'hggc', '-s', 'none'))
        db = self.db()
        rows = db.execute('SELECT a.pid, s.value, a.result, a.cbid FROM hggc_api_calls AS a '
                          'JOIN strings AS s ON s.id = a.name_id ORDER BY a.start_ns').fetchall()
        parent = rows[0][0]
        cbids = {'cudaIpcGetEventHandle': 176, 'cudaIpcOpenEventHandle': 177,
                 'cudaIpcGetMemHandle': 178, 'cudaIpcOpenMemHandle': 179,
                 'cudaIpcCloseMemHandle': 180}  # cupti_runtime_cbid.h
        seen = {}
        for pid, name, result, cbid in rows:
            if 'Ipc' not in name:
                continue
            self.assertEqual(cbid, cbids[name], name)
            key = ('parent' if pid == parent else 'child', name)
            calls, failed = seen.get(key, (0, 0))
            seen[key] = (calls + 1, failed + (result != 0))
        self.assertEqual(seen, IPC_CALLS)
        # the child's memset of the opened memory is device work of the child
        memsets = db.execute('SELECT pid, bytes FROM ppu_memsets').fetchall()
        self.assertEqual(len(memsets), 1)
        self.assertNotEqual(memsets[0][0], parent)
        self.assertEqual(memsets[0][1], 1 << 20)


if __name__ == '__main__':
    unittest.main()
