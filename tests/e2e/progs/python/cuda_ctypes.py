"""--python-backtrace=hggc test program: CUDA runtime calls from Python
through ctypes (CDLL releases the GIL during the call, PyDLL keeps it).
usage: cuda_ctypes.py cdll|pydll"""
import ctypes
import sys

LOADER = ctypes.PyDLL if sys.argv[1:] == ['pydll'] else ctypes.CDLL
cudart = LOADER('libcudart.so.13')

def allocate(n):
    ptrs = []
    for _ in range(n):
        p = ctypes.c_void_p()
        assert cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0  # line 13
        ptrs.append(p)
    return ptrs

def release(ptrs):
    for p in ptrs:
        cudart.cudaFree(p)

def main():
    release(allocate(5))
    cudart.cudaDeviceSynchronize()

if __name__ == '__main__':
    main()
