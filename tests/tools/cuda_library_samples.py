#!/usr/bin/env python3
"""NVIDIA's CUDALibrarySamples cuBLAS programs on simppu's stand-ins, under
asys -t hggc,acblas: each is built outside this repository (nvcc -cudart
shared, against the toolkit's headers and libcublas.so), run, recorded, and
its recorded cuBLAS calls compared, call for call, with the calls its source
makes (cublasX in the source is cublasX_v2 through cublas_v2.h's macros).

    cuda_library_samples.py CUDALibrarySamples-checkout WORK-DIR [--build BUILD] [SAMPLE...]

Not part of the test pass (it needs the samples' checkout and nvcc); prints
one line per sample and exits 1 if any differs."""
import argparse
import csv
import io
import os
import re
import subprocess
import sys

DEFAULT = ['Level-1/axpy/cublas_axpy_example', 'Level-1/dot/cublas_dot_example',
           'Level-1/amax/cublas_amax_example', 'Level-1/nrm2/cublas_nrm2_example',
           'Level-2/gemv/cublas_gemv_example', 'Level-3/gemm/cublas_gemm_example',
           'Level-3/gemmBatched/cublas_gemmBatched_example',
           'Level-3/gemmStridedBatched/cublas_gemmStridedBatched_example',
           'Level-3/gemmGroupedBatched/cublas_gemmGroupedBatched_example',
           'Level-3/trsm/cublas_trsm_example', 'Level-3/syrk/cublas_syrk_example',
           'Level-3/gemm3m/cublas_gemm3m_example', 'Extensions/GemmEx/cublas_GemmEx_example',
           'Extensions/AxpyEx/cublas_AxpyEx_example',
           'Extensions/GemmStridedBatchedEx/cublas_GemmStridedBatchedEx_example',
           'Extensions/geam/cublas_geam_example']


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument('samples')
    ap.add_argument('work')
    ap.add_argument('--build', default=os.path.join(here, '..', '..', 'build'))
    ap.add_argument('names', nargs='*')
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    os.makedirs(a.work, exist_ok=True)
    nvcc = os.environ.get('NVCC', '/usr/local/cuda/bin/nvcc')
    differ = 0
    for s in a.names or DEFAULT:
        src = os.path.join(a.samples, 'cuBLAS', s + '.cu')
        name = os.path.basename(s)
        exe = os.path.join(a.work, name)
        if not os.path.exists(exe):
            subprocess.run([nvcc, '-cudart', 'shared', '-O1', '-I',
                            os.path.join(a.samples, 'cuBLAS', 'utils'), '-o', exe, src,
                            '-lcublas'], check=True, capture_output=True)
        rep = os.path.join(a.work, name)
        r = subprocess.run([os.path.join(build, 'simppu', 'simppu-run'),
                            os.path.join(build, 'bin', 'asys'), 'profile', '-s', 'none', '-t',
                            'hggc,acblas', '-o', rep, '--force-overwrite=true', exe],
                           cwd=a.work, capture_output=True)
        if r.returncode != 0:
            print('%-40s FAILED (exit %d): %s' % (name, r.returncode,
                                                  r.stderr.decode(errors='replace')[-300:]))
            differ += 1
            continue
        out = subprocess.run([os.path.join(build, 'bin', 'asys-stats'), '-q', '-r', 'acblas_sum',
                              '-f', 'csv', rep + '.asys-rep'], capture_output=True, text=True,
                             check=True).stdout
        got, kernels = {}, 0
        for row in csv.DictReader(io.StringIO(out)):
            kernels += int(row['Kernels'])
            if row['Library'] == 'cuBLAS' and row['Nested'] == '0':
                got[re.sub(r'_v2$', '', row['Name'])] = int(row['Num Calls'])
        want = {}
        with open(src) as f:
            for m in re.findall(r'\b(cublas[A-Z]\w*)\s*\(', f.read()):
                if m not in ('cublasGetStatusString', 'cublasGetStatusName'):
                    want[m] = want.get(m, 0) + 1
        ok = got == want
        differ += not ok
        print('%-40s %s' % (name, 'recorded call for call (%d calls, %d kernels)'
                            % (sum(got.values()), kernels) if ok
                            else 'DIFFERS: recorded %s, source %s' % (got, want)))
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
