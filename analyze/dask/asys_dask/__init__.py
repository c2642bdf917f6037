"""asys-stats on a Dask cluster (asys-stats --scheduler ADDR).

The only Dask-specific code of asys.  asys-stats runs ``python3 -m asys_dask``
with the scheduler's address, its own path, a directory and the reports; this
package submits one task per report, which runs ``asys-stats --partial`` on a
worker (the reports, and their cached NAME.sqlite, on a filesystem every
worker sees), and writes the partials it gets back as DIR/N.partial for the
asys-stats that started it, which merges them with the same C code as its
local -j workers: the results agree by construction.
"""

PROG = 'asys-stats'
