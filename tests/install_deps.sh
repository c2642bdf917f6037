#!/usr/bin/env bash
# Installs what building and testing asys needs (Debian/Ubuntu).  The CUDA
# toolkit (NVTX and CUPTI headers) is expected at /usr/local/cuda.
set -euo pipefail
# usage: tests/install_deps.sh [--consumers]
#   --consumers: only the third-party readers some tests check outputs with
packages=(build-essential cmake pkg-config python3 zstd tar
          libsqlite3-dev zlib1g-dev libcjson-dev libpcre2-dev libzstd-dev libdw-dev check
          libffmpeg-nvenc-dev python3-dask python3-distributed)
[ "${1:-}" = --consumers ] && packages=(golang-go)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null ||
  { "${as_root[@]}" apt-get update -qq && "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; }
