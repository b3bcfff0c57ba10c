#!/usr/bin/env bash
# The checks to run on a machine with a GPU, lent for minutes: as few calls as possible.
#
#   benchmarks/device.sh prepare        # here: wheels and the baseline into .devrun/
#   benchmarks/device.sh gpu            # there: the GPU tests, the CUDA sources through
#                                       # NVRTC, benchmarks/gpu.py, a 2-rank grid on the
#                                       # GPU, one table (device_table.py)
#   benchmarks/device.sh grid [CASES]   # there: the MPI grid cells of ab.py against BASELINE
#
# The GPU machine's image has numpy, scipy, numba, cupy, pytest and hypothesis, but not
# the MPI runtime the grid runs on, and nothing can be fetched there: `prepare` downloads
# the mpich and mpi4py wheels (this venv's versions, for the image's Python 3.12) and
# writes the baseline checkout's packages, all under .devrun/ (ignored through
# .git/info/exclude, carried by the call). Results go to $OUT (the folder that comes
# back), or to .devrun/out where OUT is unset.
#
# The grid cells compare this tree with BASELINE (default f8f6d7c, the commit before the
# grid search moved onto the shared driver): on 16 cores four ranks do not share two
# cores, as they must on the 2-core development machine.
set -uo pipefail
cd "$(dirname "$0")/.."
DEV=.devrun
BASELINE=${BASELINE:-f8f6d7c}
OUT=${OUT:-$DEV/out}
PY=${PYTHON:-python3}

prepare() {
    local venv_py=.venv/bin/python
    [ -x "$venv_py" ] || { echo "prepare needs the project's venv (python3 tasks.py test)"; exit 2; }
    grep -qx "/$DEV/" .git/info/exclude 2>/dev/null || echo "/$DEV/" >>.git/info/exclude
    rm -rf "$DEV/whl" "$DEV/baseline"
    mkdir -p "$DEV/whl" "$DEV/baseline"
    local pkgs=()
    for name in mpich mpi4py; do
        pkgs+=("$name==$("$venv_py" -m pip show "$name" | awk '/^Version:/{print $2}')")
    done
    "$venv_py" -m pip download -q --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$DEV/whl" "${pkgs[@]}" \
        pytest-xdist execnet
    git archive "$BASELINE" spbfs semirings | tar -x -C "$DEV/baseline"
    echo "$BASELINE" >"$DEV/baseline/COMMIT"
    du -sh "$DEV"
    echo "then: run(command='bash benchmarks/device.sh gpu', carry=['$DEV'])"
}

setup() {
    mkdir -p "$OUT"
    if [ -d "$DEV/whl" ]; then
        # --prefix, not --target: the mpich wheel's libraries are data files, which
        # --target leaves out. mpi4py is then told where libmpi is.
        local prefix=/tmp/devrun-mpi site
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --prefix "$prefix" "$DEV"/whl/*.whl || exit 1
        site=$("$PY" -c 'import sys, sysconfig
print(sysconfig.get_path("purelib", vars={"base": sys.argv[1], "platbase": sys.argv[1]}))' "$prefix")
        export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} PATH=$prefix/bin:$PATH
        export MPI4PY_LIBMPI=$prefix/lib/libmpi.so.12
    fi
    export PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=passive
    {
        date -u
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
        echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
        PYTHONPATH=$PWD:${PYTHONPATH:-} "$PY" -c 'import sys, numpy, scipy, numba
print("python", sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__,
      "numba", numba.__version__)
try:
    import cupy
    print("cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount())
except Exception as exc:
    print("cupy unusable:", exc)
try:
    from mpi4py import MPI
    print("mpi4py", MPI.Get_library_version().splitlines()[0])
except Exception as exc:
    print("mpi4py unusable:", exc)'
    } 2>&1 | tee "$OUT/machine.txt"
}

gpu() {
    setup
    # The gpu-marked tests only (the CPU suite runs in CI), on 8 workers where
    # pytest-xdist is there: cold compiles dominate and run side by side.
    local par=()
    PYTHONPATH=$PWD:${PYTHONPATH:-} "$PY" -c 'import xdist' 2>/dev/null && par=(-n 8)
    PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 240 "$PY" -m pytest -q -p no:cacheprovider \
        "${par[@]}" -m gpu tests 2>&1 | tee "$OUT/gpu_tests.log"
    # Every CUDA source through NVRTC with the engine's options (CI does it without a GPU
    # where the nvidia-cuda-nvrtc wheel is installed; here cupy's own libnvrtc serves).
    PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 60 "$PY" -m pytest -q -rs -p no:cacheprovider \
        -o addopts= tests/test_cuda_sources.py 2>&1 | tee -a "$OUT/gpu_tests.log"
    PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 180 "$PY" benchmarks/gpu.py --scales 20-23 \
        --road "$(PYTHONPATH=$PWD "$PY" -c 'import spbfs.datasets as d; print(d.path("luxembourg_osm"))')" \
        --json "$OUT/gpu.json" 2>&1 | tee "$OUT/gpu.txt"
    # The grid on the GPU: two ranks sharing the one device, every tree validated.
    local s
    for s in ${GRID_SCALES:-20 21 22}; do
        PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 60 mpiexec -n 2 "$PY" -m spbfs bench \
            --grid 2x1 --backend cupy --scale "$s" --roots 16 --json "$OUT/grid_$s.json" \
            2>&1 | tail -n 3 | tee -a "$OUT/gpu_grid.txt"
    done
    PYTHONPATH=$PWD:${PYTHONPATH:-} "$PY" benchmarks/device_table.py "$OUT" | tee "$OUT/table.md"
}

grid() {
    setup
    [ -d "$DEV/baseline" ] || { echo "no $DEV/baseline: run 'benchmarks/device.sh prepare' here"; exit 2; }
    local cases=${1:-dist18x2x1,dist18x2x2,dist20x2x1,dist20x2x2}
    timeout 540 "$PY" benchmarks/ab.py --a "$DEV/baseline" --b . --cases "$cases" \
        --rounds "${ROUNDS:-3}" --roots 64 2>&1 | tee "$OUT/grid.txt"
}

case "${1:-}" in
    prepare) prepare ;;
    gpu) gpu ;;
    grid) shift; grid "$@" ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
esac
