"""Hand-written CUDA kernels for the BFS steps (cupy ``RawModule``).

The vectorized cupy path (:mod:`spbfs.kernels.bfs_vectorized`) expresses a level as
a dozen whole-array operations (gather, ``unique`` = a sort, scatter), each a
kernel launch plus Python overhead; on a road network of a thousand tiny
levels that overhead is the whole cost, and on a Kronecker graph the sort is.
The kernels here do one level in one launch and read back one 40-byte counter
block per level (the counts the direction heuristic needs).

Top-down (``td_small`` / ``td_large``)
    Edge-parallel expansion of a frontier *list*: each frontier vertex's
    adjacency is a range of an edge space laid out by an inclusive prefix sum
    of the frontier degrees; every thread takes edges of that space and finds
    its owner by binary search (load balancing by prefix sum and binary
    search, as in the CS121 lecture *CUDA 6: Breadth-First Search*, so a hub
    of 10^5 edges is spread over the whole GPU). For
    frontiers of at most ``SMALL`` vertices every block computes the prefix
    sum itself in shared memory (no extra launch: this is the road-network
    case); larger ones take ``cupy.cumsum`` of the degrees the previous level
    wrote next to the list.

    The parent is claimed with ``atomicMin`` on the parent word (``-1`` is the
    largest unsigned 64-bit value, so "unvisited" is the identity of ``min``):
    the final parent is the smallest frontier vertex reaching ``v``, exactly
    the ``min_second`` semiring and the same answer as the sequential CPU
    kernels, whatever the thread order. The thread whose ``atomicMin`` saw
    ``-1`` is the unique first claimer; it stamps the level, sets the visited
    bit and appends ``v`` to a shared-memory stash; each block then reserves
    its slots in the next list with one global ``atomicAdd`` and writes them
    coalesced, with their degrees (the next level's prefix sum input).

    A per-vertex level stamp (int32) tells "visited at an earlier level" (skip)
    from "claimed in this level" (still compete with ``atomicMin``); the
    visited bitmap filters first, so unvisited vertices cost no stamp read.

Bottom-up (``bu_step``)
    One warp per 32-vertex word of the visited bitmap: words with no unvisited
    vertex cost one load. Each unvisited vertex scans its first
    ``BU_SERIAL`` in-neighbours alone, in increasing order, testing the
    frontier *bitmap*, and stops at the first hit; vertices still pending
    after that are taken over by the whole warp, 32 neighbours per step, the
    lowest set ballot bit being the first hit. So the parent is again the
    smallest frontier in-neighbour and the edge count ("scanned up to the
    first hit") equals the CPU kernels' exactly. The warp's ballot of found
    vertices *is* the next frontier word and the visited-word update: no
    atomics.

Frontier encode / decode (``map_to_list`` / ``list_to_map``)
    Bitmap to list by popcount, one shared and one global atomic per block;
    list to bitmap by ``atomicOr``. Only at a change of direction.

Many small top-down levels (``td_fused``, the engine's ``topdown_levels``)
    A road network has a thousand levels of a few hundred vertices: there the
    host round trip *is* the level. While the frontier has at most ``SMALL``
    vertices and ``FUSED_EDGES`` edges, one block of ``SMALL`` threads runs
    level after level (prefix sum in shared memory, the same ``atomicMin``
    claims, ``__syncthreads`` between levels) and applies the driver's own stop
    rules on the device: empty frontier, ``max_depth``, ``target`` reached,
    Beamer's test ``m_f * alpha > m_u`` (``m_u``: the in-edges of the unvisited
    vertices) saying bottom-up, or a frontier grown
    too large for one block. Per-level statistics (sizes, edges, device time
    from ``%globaltimer``) come back with the header in one copy.

Counters live in one device array, cumulative across searches (never reset,
so no memset launch): the host keeps the last values it read and takes
differences, and passes the list-slot base to the kernels. The kernels sum the
degrees of the vertices they find (the next ``m_f``) and, on a directed graph,
their in-degrees: a bottom-up sweep reads in-edges, so the direction test
weighs the unvisited vertices' in-edges, as on every engine. On an undirected
graph the in-degree array *is* the degree array and the kernels, comparing the
two pointers, read and sum nothing more. The buffers
(stamps, bitmaps, lists, counters) live in a workspace cached per graph block,
so a search allocates nothing; a search still running elsewhere never shares
its workspace.

Host synchronisation: one copy of the counters per level (the sizes the
direction heuristic needs), one per fused run of levels, and one at the start
of a search for the source's degree (two on a directed graph: its in-degree).

A DCSC block is expanded once to a full column-pointer array on the device
(O(n) words, cached per block): on one GPU that costs less than a binary
search of ``JC`` per frontier vertex.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
import weakref
from typing import Any

import numpy as np

from spbfs.config import Config
from spbfs.search.driver import LocalEngine

__all__ = ["SMALL", "kernels_available", "make_engine"]

#: Frontiers of at most this many vertices are expanded with an in-kernel prefix sum.
SMALL = 1024
_TD_THREADS = 256
_TD_ITEMS = 8
_TD_TILE = _TD_THREADS * _TD_ITEMS
_BU_THREADS = 256
_BU_SERIAL = 8
_CONV_THREADS = 256
_FUSED_THREADS = SMALL  # one thread per frontier vertex in the fused kernel
#: The fused kernel (one block, many levels) runs while a level has at most this many edges.
FUSED_EDGES = 8192
_FUSED_MAXLEV = 4096
_FUSED_ROWS = 64  # level rows read back with the header in one copy
_SCAN_SMALL = 65536  # prefix sums up to this length in one block, longer ones by cupy.cumsum
_SCAN_THREADS = 1024
_INT32_MAX = np.iinfo(np.int32).max

# Counter slots (cumulative, int64).
_C_SLOTS = 0  # list slots handed out (top-down claims, bitmap -> list)
_C_BU_NEW = 1  # vertices found bottom-up
_C_BU_SCANNED = 2  # edges examined bottom-up
_C_DEGSUM = 3  # degree sum of vertices found (both directions)
_C_INSUM = 4  # in-degree sum of vertices found (directed graphs only)
_NCTR = 8

_SOURCE = r"""
typedef IND_T ind_t;
typedef PTR_T ptr_t;
typedef VID_T vid_t;
typedef unsigned long long ull;

#define FULL 0xffffffffu
#define TD_T TD_THREADS_V
#define TD_ITEMS TD_ITEMS_V
#define TD_TILE (TD_T * TD_ITEMS)
#define SMALL SMALL_V
#define BU_T BU_THREADS_V
#define BU_SERIAL BU_SERIAL_V
#define CONV_T CONV_THREADS_V
#define FUSED_T FUSED_THREADS_V
#define SCAN_T 1024

__device__ __forceinline__ long long warp_sum(long long x) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(FULL, x, o);
    return x;
}

/* Sum over the block, valid in thread 0; every thread must call. */
__device__ __forceinline__ long long block_sum(long long x, long long* scratch) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    x = warp_sum(x);
    __syncthreads();
    if (lane == 0) scratch[wid] = x;
    __syncthreads();
    long long t = 0;
    if (wid == 0) {
        t = lane < nw ? scratch[lane] : 0;
        t = warp_sum(t);
    }
    return t;
}

/* Exclusive prefix over the block of one value per thread; *total gets the sum. */
__device__ __forceinline__ long long block_exclusive_scan(long long x, long long* scratch,
                                                          long long* total) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    long long inc = x;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        long long y = __shfl_up_sync(FULL, inc, o);
        if (lane >= o) inc += y;
    }
    __syncthreads();
    if (lane == 31) scratch[wid] = inc;
    __syncthreads();
    if (wid == 0) {
        long long s = lane < nw ? scratch[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            long long y = __shfl_up_sync(FULL, s, o);
            if (lane >= o) s += y;
        }
        if (lane < nw) scratch[lane] = s;
    }
    __syncthreads();
    const long long before = wid ? scratch[wid - 1] : 0;
    *total = scratch[nw - 1];
    return before + inc - x;
}

/* One edge u -> v of the top-down expansion: claim v with atomicMin. */
__device__ __forceinline__ void td_visit(long long u, long long v, ull* parents, int* stamp,
                                         unsigned* vis, int depth, int* s_cnt,
                                         vid_t* s_stash) {
    const unsigned bit = 1u << (unsigned)(v & 31);
    if (vis[v >> 5] & bit) {
        /* Set bit: visited earlier (skip) or claimed in this level (compete). A stamp
           not yet visible reads -1 and competes, which is harmless. */
        const int s = stamp[v];
        if (s >= 0 && s != depth) return;
    }
    const ull p = *((volatile ull*)(parents + v));
    if (p <= (ull)u) return;
    const ull old = atomicMin(parents + v, (ull)u);
    if (old == ~0ull) {
        stamp[v] = depth;
        atomicOr(vis + (v >> 5), bit);
        const int slot = atomicAdd(s_cnt, 1);
        s_stash[slot] = (vid_t)v;
    }
}

/* Write the block's claims to the next list (one global atomic per block); their in-degrees
   go to *isum where indeg is not deg (a directed graph). */
__device__ __forceinline__ long long td_flush(int* s_cnt, long long* s_base, vid_t* s_stash,
                                              const long long* __restrict__ deg,
                                              const long long* __restrict__ indeg,
                                              long long* isum, vid_t* next,
                                              long long* fdeg, long long* levels, int want,
                                              int depth, long long* ctr, long long base) {
    __syncthreads();
    const int cnt = *s_cnt;
    if (threadIdx.x == 0 && cnt)
        *s_base = (long long)atomicAdd((ull*)ctr, (ull)cnt) - base;
    __syncthreads();
    if (threadIdx.x == 0) *s_cnt = 0;
    long long dsum = 0;
    const long long b = *s_base;
    for (int i = threadIdx.x; i < cnt; i += blockDim.x) {
        const vid_t v = s_stash[i];
        const long long d = deg[v];
        next[b + i] = v;
        fdeg[b + i] = d;
        dsum += d;
        if (indeg != deg) *isum += indeg[v];
        if (want) levels[v] = depth;
    }
    __syncthreads();
    return dsum;
}

/* The block's degree sums into the counters: out-degrees to slot 3, in-degrees to slot 4
   (a directed graph only: on an undirected one indeg is deg and slot 3 says it all). */
__device__ __forceinline__ void add_degree_sums(long long dsum, long long isum,
                                                const long long* deg, const long long* indeg,
                                                long long* s_scr, long long* ctr) {
    const long long t = block_sum(dsum, s_scr);
    if (threadIdx.x == 0 && t) atomicAdd((ull*)(ctr + 3), (ull)t);
    if (indeg != deg) {
        const long long i = block_sum(isum, s_scr);
        if (threadIdx.x == 0 && i) atomicAdd((ull*)(ctr + 4), (ull)i);
    }
}

extern "C" __global__ void __launch_bounds__(TD_T)
td_small(const vid_t* __restrict__ front, long long k,
         const ptr_t* __restrict__ ptr, const ind_t* __restrict__ ind,
         const long long* __restrict__ deg, const long long* __restrict__ indeg,
         ull* parents, long long* levels, long long want_, int* stamp, unsigned* vis,
         long long depth_, vid_t* next, long long* fdeg, long long* ctr, long long base) {
    __shared__ long long s_inc[SMALL];
    __shared__ long long s_start[SMALL];
    __shared__ vid_t s_stash[TD_TILE];
    __shared__ long long s_scr[32];
    __shared__ int s_cnt;
    __shared__ long long s_base;
    const int depth = (int)depth_, want = (int)want_;
    const int kk = (int)k;
    const int per = (kk + TD_T - 1) / TD_T;
    const int lo = threadIdx.x * per;
    const int hi = min(lo + per, kk);
    long long sum = 0;
    for (int i = lo; i < hi; ++i) {
        const long long u = (long long)front[i];
        const ptr_t a = ptr[u];
        const long long d = (long long)(ptr[u + 1] - a);
        s_start[i] = (long long)a;
        s_inc[i] = d;
        sum += d;
    }
    long long total;
    long long run = block_exclusive_scan(sum, s_scr, &total);
    for (int i = lo; i < hi; ++i) {
        run += s_inc[i];
        s_inc[i] = run;
    }
    if (threadIdx.x == 0) s_cnt = 0;
    __syncthreads();
    long long dsum = 0, isum = 0;
    for (long long t0 = (long long)blockIdx.x * TD_TILE; t0 < total;
         t0 += (long long)gridDim.x * TD_TILE) {
#pragma unroll
        for (int it = 0; it < TD_ITEMS; ++it) {
            const long long e = t0 + it * TD_T + threadIdx.x;
            if (e < total) {
                int a = 0, b = kk - 1;
                while (a < b) {
                    const int m = (a + b) >> 1;
                    if (s_inc[m] > e) b = m; else a = m + 1;
                }
                const long long before = a ? s_inc[a - 1] : 0;
                const long long v = (long long)ind[s_start[a] + (e - before)];
                td_visit((long long)front[a], v, parents, stamp, vis, depth, &s_cnt, s_stash);
            }
        }
        dsum += td_flush(&s_cnt, &s_base, s_stash, deg, indeg, &isum, next, fdeg, levels,
                         want, depth, ctr, base);
    }
    add_degree_sums(dsum, isum, deg, indeg, s_scr, ctr);
}

/* First index i in [lo, hi) with inc[i] > e (exists when e < inc[hi - 1]). */
__device__ __forceinline__ long long upper_bound(const long long* __restrict__ inc, long long lo,
                                                 long long hi, long long e) {
    long long a = lo, b = hi - 1;
    while (a < b) {
        const long long m = (a + b) >> 1;
        if (inc[m] > e) b = m; else a = m + 1;
    }
    return a;
}

extern "C" __global__ void __launch_bounds__(TD_T)
td_large(const vid_t* __restrict__ front, long long k, const long long* __restrict__ inc,
         long long total,
         const ptr_t* __restrict__ ptr, const ind_t* __restrict__ ind,
         const long long* __restrict__ deg, const long long* __restrict__ indeg,
         ull* parents, long long* levels, long long want_, int* stamp, unsigned* vis,
         long long depth_, vid_t* next, long long* fdeg, long long* ctr, long long base) {
    __shared__ vid_t s_stash[TD_TILE];
    __shared__ long long s_scr[32];
    __shared__ int s_cnt;
    __shared__ long long s_base, s_lo, s_hi;
    const int depth = (int)depth_, want = (int)want_;
    if (threadIdx.x == 0) s_cnt = 0;
    long long dsum = 0, isum = 0;
    for (long long t0 = (long long)blockIdx.x * TD_TILE; t0 < total;
         t0 += (long long)gridDim.x * TD_TILE) {
        if (threadIdx.x == 0) s_lo = upper_bound(inc, 0, k, t0);
        if (threadIdx.x == 32) {
            const long long last = min(t0 + TD_TILE, total) - 1;
            s_hi = upper_bound(inc, 0, k, last);
        }
        __syncthreads();
        const long long olo = s_lo, ohi = s_hi + 1;
#pragma unroll
        for (int it = 0; it < TD_ITEMS; ++it) {
            const long long e = t0 + it * TD_T + threadIdx.x;
            if (e < total) {
                const long long a = upper_bound(inc, olo, ohi, e);
                const long long before = a ? inc[a - 1] : 0;
                const long long u = (long long)front[a];
                const long long v = (long long)ind[(long long)ptr[u] + (e - before)];
                td_visit(u, v, parents, stamp, vis, depth, &s_cnt, s_stash);
            }
        }
        dsum += td_flush(&s_cnt, &s_base, s_stash, deg, indeg, &isum, next, fdeg, levels,
                         want, depth, ctr, base);
    }
    add_degree_sums(dsum, isum, deg, indeg, s_scr, ctr);
}

__device__ __forceinline__ bool in_front(const unsigned* __restrict__ front, long long u) {
    return (front[u >> 5] >> (unsigned)(u & 31)) & 1u;
}

extern "C" __global__ void __launch_bounds__(BU_T)
bu_step(long long n, long long nwords, const ptr_t* __restrict__ ptr,
        const ind_t* __restrict__ ind, const long long* __restrict__ deg,
        const long long* __restrict__ indeg, const unsigned* __restrict__ front,
        unsigned* next, unsigned* vis, long long* parents, long long* levels, long long want_,
        int* stamp, long long depth_, long long* ctr) {
    __shared__ long long s_scr[32];
    const int depth = (int)depth_, want = (int)want_;
    const int lane = threadIdx.x & 31;
    const long long warp0 = ((long long)blockIdx.x * BU_T + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * BU_T) >> 5;
    long long cnt = 0, scanned = 0, dsum = 0, isum = 0;
    for (long long w = warp0; w < nwords; w += nwarps) {
        const unsigned vw = vis[w];
        const long long v = w * 32 + lane;
        const bool mine = v < n && !((vw >> lane) & 1u);
        if (!__ballot_sync(FULL, mine)) {
            if (lane == 0) next[w] = 0u;
            continue;
        }
        long long found = -1;
        long long lo = 0, hi = 0;
        if (mine) {
            lo = (long long)ptr[v];
            hi = (long long)ptr[v + 1];
            const long long stop = min(hi, lo + BU_SERIAL);
            for (long long e = lo; e < stop; ++e) {
                const long long u = (long long)ind[e];
                if (in_front(front, u)) {
                    found = u;
                    scanned += e - lo + 1;
                    break;
                }
            }
            if (found < 0 && hi <= lo + BU_SERIAL) scanned += hi - lo;
        }
        const bool pending = mine && found < 0 && hi > lo + BU_SERIAL;
        unsigned pm = __ballot_sync(FULL, pending);
        while (pm) {
            const int l = __ffs(pm) - 1;
            pm &= pm - 1;
            const long long lo_l = __shfl_sync(FULL, lo, l);
            const long long hi_l = __shfl_sync(FULL, hi, l);
            long long f = -1, pos = hi_l;
            for (long long b = lo_l + BU_SERIAL; b < hi_l; b += 32) {
                const long long e = b + lane;
                long long u = 0;
                bool hit = false;
                if (e < hi_l) {
                    u = (long long)ind[e];
                    hit = in_front(front, u);
                }
                const unsigned hm = __ballot_sync(FULL, hit);
                if (hm) {
                    const int fl = __ffs(hm) - 1;
                    f = __shfl_sync(FULL, u, fl);
                    pos = b + fl;
                    break;
                }
            }
            if (lane == l) {
                if (f >= 0) {
                    found = f;
                    scanned += pos - lo + 1;
                } else {
                    scanned += hi - lo;
                }
            }
        }
        const unsigned nb = __ballot_sync(FULL, found >= 0);
        if (lane == 0) {
            next[w] = nb;
            if (nb) vis[w] = vw | nb;
        }
        if (found >= 0) {
            parents[v] = found;
            stamp[v] = depth;
            if (want) levels[v] = depth;
            cnt += 1;
            dsum += deg[v];
            if (indeg != deg) isum += indeg[v];
        }
    }
    const long long c = block_sum(cnt, s_scr);
    if (threadIdx.x == 0 && c) atomicAdd((ull*)(ctr + 1), (ull)c);
    const long long s = block_sum(scanned, s_scr);
    if (threadIdx.x == 0 && s) atomicAdd((ull*)(ctr + 2), (ull)s);
    add_degree_sums(dsum, isum, deg, indeg, s_scr, ctr);
}

/* stamp = 0 where a parent is set (the sources), -1 elsewhere; vis = the same as bits. */
__device__ __forceinline__ ull global_ns() {
    ull t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Consecutive top-down levels in one block, without returning to the host, while the
   frontier stays small (at most SMALL vertices and edge_cap edges). The same stop rules as
   spbfs.kernels.bfs_numba.topdown_levels; reason 0 = empty / max_depth / target, 1 = Beamer says
   bottom-up, 2 = frontier too large for one block or the stats buffer is full. Beamer's test
   weighs m_in, the in-edges of the unvisited vertices (what a bottom-up sweep reads: their
   in-degrees leave it, their out-degrees leave m_u); on an undirected graph indeg is deg and
   m_in is m_u.
   hdr = (levels done, depth, m_u, m_f, reason, frontier size, m_in); stats[l] = (frontier,
   new, edges, nanoseconds). */
extern "C" __global__ void __launch_bounds__(FUSED_T)
td_fused(const vid_t* __restrict__ front0, long long k0, long long m_u0, long long m_in0,
         long long depth0,
         long long max_depth, long long target, double alpha, long long beamer,
         long long edge_cap, long long maxlev,
         const ptr_t* __restrict__ ptr, const ind_t* __restrict__ ind,
         const long long* __restrict__ deg, const long long* __restrict__ indeg,
         ull* parents, long long* levels, long long want_, int* stamp, unsigned* vis,
         vid_t* out, long long* fdeg, long long* stats, long long* hdr) {
    __shared__ long long s_inc[SMALL];
    __shared__ long long s_start[SMALL];
    __shared__ vid_t s_front[SMALL];
    __shared__ long long s_scr[32];
    __shared__ int s_cnt;
    __shared__ long long s_dsum, s_isum;
    const int tid = threadIdx.x;
    const int want = (int)want_;
    const bool directed = indeg != deg;
    const vid_t* cur = front0;
    long long k = k0, m_u = m_u0, m_in = m_in0, depth = depth0, m_f = 0, nlev = 0;
    int reason = 0;
    while (k > 0) {
        if (max_depth >= 0 && depth >= max_depth) break;
        if (target >= 0 && *((volatile ull*)(parents + target)) != ~0ull) break;
        if (nlev > 0 && beamer && (double)m_f * alpha > (double)m_in) { reason = 1; break; }
        if (nlev > 0 && (k > SMALL || m_f > edge_cap)) { reason = 2; break; }
        if (nlev >= maxlev) { reason = 2; break; }
        const ull t0 = global_ns();
        depth += 1;
        const int d32 = (int)depth;
        long long d = 0;
        if (tid < k) {
            const vid_t u = cur[tid];
            const ptr_t a = ptr[u];
            d = (long long)(ptr[u + 1] - a);
            s_front[tid] = u;
            s_start[tid] = (long long)a;
        }
        long long total;
        const long long ex = block_exclusive_scan(d, s_scr, &total);
        if (tid < k) s_inc[tid] = ex + d;
        if (tid == 0) s_cnt = 0;
        __syncthreads();
        const int kk = (int)k;
        long long dsum = 0, isum = 0;
        for (long long e = tid; e < total; e += FUSED_T) {
            int a = 0, b = kk - 1;
            while (a < b) {
                const int m = (a + b) >> 1;
                if (s_inc[m] > e) b = m; else a = m + 1;
            }
            const long long before = a ? s_inc[a - 1] : 0;
            const long long v = (long long)ind[s_start[a] + (e - before)];
            const long long u = (long long)s_front[a];
            const unsigned bit = 1u << (unsigned)(v & 31);
            if (vis[v >> 5] & bit) {
                const int s = stamp[v];
                if (s >= 0 && s != d32) continue;
            }
            const ull p = *((volatile ull*)(parents + v));
            if (p <= (ull)u) continue;
            const ull old = atomicMin(parents + v, (ull)u);
            if (old == ~0ull) {
                stamp[v] = d32;
                atomicOr(vis + (v >> 5), bit);
                const int slot = atomicAdd(&s_cnt, 1);
                const long long dv = deg[v];
                out[slot] = (vid_t)v;
                fdeg[slot] = dv;
                dsum += dv;
                if (directed) isum += indeg[v];
                if (want) levels[v] = depth;
            }
        }
        const long long dt = block_sum(dsum, s_scr);
        __syncthreads();
        /* Valid in thread 0, the only reader; the barrier below orders the next scan. */
        const long long it = directed ? block_sum(isum, s_scr) : dt;
        if (tid == 0) {
            s_dsum = dt;
            s_isum = it;
            long long* st = stats + 4 * nlev;
            st[0] = k;
            st[1] = s_cnt;
            st[2] = total;
            st[3] = (long long)(global_ns() - t0);
        }
        __syncthreads();
        k = s_cnt;
        m_f = s_dsum;
        m_u -= m_f;
        m_in -= s_isum;
        cur = out;
        nlev += 1;
        __syncthreads();
    }
    if (tid == 0) {
        hdr[0] = nlev;
        hdr[1] = depth;
        hdr[2] = m_u;
        hdr[3] = m_f;
        hdr[4] = reason;
        hdr[5] = k;
        hdr[6] = m_in;
    }
}

/* A caller's id array (int64) as a vertex list; hdr[7] = the sum of their degrees. One block. */
extern "C" __global__ void __launch_bounds__(CONV_T)
prep_list(const long long* __restrict__ ids, long long k, const long long* __restrict__ deg,
          vid_t* out, long long* hdr) {
    __shared__ long long s_scr[32];
    long long sum = 0;
    for (long long i = threadIdx.x; i < k; i += CONV_T) {
        const long long v = ids[i];
        out[i] = (vid_t)v;
        sum += deg[v];
    }
    const long long t = block_sum(sum, s_scr);
    if (threadIdx.x == 0) hdr[7] = t;
}

/* Inclusive prefix sum of x[0:k] in one block (chunks of 4 * SCAN_T with a carry): one
   launch instead of a library scan's several, for the mid-size frontiers. */
extern "C" __global__ void __launch_bounds__(SCAN_T)
scan_small(const long long* __restrict__ x, long long k, long long* inc) {
    __shared__ long long s_scr[32];
    __shared__ long long s_carry;
    if (threadIdx.x == 0) s_carry = 0;
    for (long long c0 = 0; c0 < k; c0 += 4 * SCAN_T) {
        const long long i0 = c0 + 4 * (long long)threadIdx.x;
        long long v[4];
        long long sum = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            v[j] = i0 + j < k ? x[i0 + j] : 0;
            sum += v[j];
        }
        long long total;
        long long run = block_exclusive_scan(sum, s_scr, &total) + s_carry;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            run += v[j];
            if (i0 + j < k) inc[i0 + j] = run;
        }
        __syncthreads();
        if (threadIdx.x == 0) s_carry += total;
    }
}

extern "C" __global__ void __launch_bounds__(CONV_T)
init_state(const long long* __restrict__ parents, long long n, long long nwords, int* stamp,
           unsigned* vis) {
    const long long v = (long long)blockIdx.x * CONV_T + threadIdx.x;
    bool seen = false;
    if (v < n) {
        seen = parents[v] != -1;
        stamp[v] = seen ? 0 : -1;
    }
    const unsigned b = __ballot_sync(FULL, seen);
    if ((threadIdx.x & 31) == 0 && (v >> 5) < nwords) vis[v >> 5] = b;
}

extern "C" __global__ void __launch_bounds__(CONV_T)
list_to_map(const vid_t* __restrict__ list, long long k, unsigned* bm) {
    for (long long i = (long long)blockIdx.x * CONV_T + threadIdx.x; i < k;
         i += (long long)gridDim.x * CONV_T) {
        const long long v = (long long)list[i];
        atomicOr(bm + (v >> 5), 1u << (unsigned)(v & 31));
    }
}

extern "C" __global__ void __launch_bounds__(CONV_T)
map_to_list(const unsigned* __restrict__ bm, long long nwords,
            const long long* __restrict__ deg, vid_t* list, long long* fdeg, long long* ctr,
            long long base) {
    __shared__ int s_cnt;
    __shared__ long long s_base;
    if (threadIdx.x == 0) s_cnt = 0;
    __syncthreads();
    const long long w = (long long)blockIdx.x * CONV_T + threadIdx.x;
    unsigned bits = w < nwords ? bm[w] : 0u;
    const int c = __popc(bits);
    const int local = c ? atomicAdd(&s_cnt, c) : 0;
    __syncthreads();
    if (threadIdx.x == 0 && s_cnt)
        s_base = (long long)atomicAdd((ull*)ctr, (ull)s_cnt) - base;
    __syncthreads();
    long long pos = s_base + local;
    while (bits) {
        const int b = __ffs(bits) - 1;
        bits &= bits - 1;
        const long long v = w * 32 + b;
        list[pos] = (vid_t)v;
        fdeg[pos] = deg[v];
        ++pos;
    }
}
"""

_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
#: The kernels of every module, looked up by these names (``extern "C"``: unmangled).
KERNELS = (
    "td_small", "td_large", "td_fused", "bu_step", "init_state", "list_to_map", "map_to_list",
    "prep_list", "scan_small",
)
#: NVRTC options of every module (cupy adds the device's architecture).
OPTIONS = ("-std=c++17",)
#: The index types a module is specialised to: row ids, column pointers, vertex ids.
INDEX_DTYPES = (np.int32, np.int64)


def kernel_source(ind_dtype: Any, ptr_dtype: Any, vid_dtype: Any) -> str:
    """The CUDA C source specialised to the index types (also used to compile-check it)."""
    subs = {
        "IND_T": _CTYPES[np.dtype(ind_dtype)],
        "PTR_T": _CTYPES[np.dtype(ptr_dtype)],
        "VID_T": _CTYPES[np.dtype(vid_dtype)],
        "TD_THREADS_V": str(_TD_THREADS),
        "TD_ITEMS_V": str(_TD_ITEMS),
        "SMALL_V": str(SMALL),
        "BU_THREADS_V": str(_BU_THREADS),
        "BU_SERIAL_V": str(_BU_SERIAL),
        "CONV_THREADS_V": str(_CONV_THREADS),
        "FUSED_THREADS_V": str(_FUSED_THREADS),
    }
    src = _SOURCE
    for key, value in subs.items():
        src = src.replace(key, value)
    return src


_MODULES: dict[tuple[str, str, str], dict[str, Any]] = {}


def _kernels(ind_dtype: Any, ptr_dtype: Any, vid_dtype: Any) -> dict[str, Any]:
    key = (np.dtype(ind_dtype).name, np.dtype(ptr_dtype).name, np.dtype(vid_dtype).name)
    fns = _MODULES.get(key)
    if fns is None:
        import cupy

        mod = cupy.RawModule(code=kernel_source(ind_dtype, ptr_dtype, vid_dtype),
                             options=OPTIONS)
        fns = {name: mod.get_function(name) for name in KERNELS}
        _MODULES[key] = fns
    return fns


def kernels_available() -> bool:
    """True when cupy sees a GPU and the kernels compile for it."""
    try:
        from semirings.backend import gpu_available

        if not gpu_available():
            return False
        _kernels(np.int32, np.int32, np.int32)
        return True
    except Exception:
        return False


@functools.cache
def _sm_count() -> int:
    import cupy

    try:
        dev = cupy.cuda.Device().id
        return int(cupy.cuda.runtime.getDeviceProperties(dev)["multiProcessorCount"])
    except Exception:  # only sizes grids
        return 108


_FULL_PTR: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _device_csr(block: Any) -> tuple[Any, Any]:
    """(column pointers over all columns, row ids) of a block, on the device."""
    import cupy

    ind = cupy.ascontiguousarray(cupy.asarray(block.ind))
    if block.format != "dcsc":
        return cupy.ascontiguousarray(cupy.asarray(block.ptr)), ind
    full = _FULL_PTR.get(block)
    if full is None:
        ptr = cupy.asarray(block.ptr)
        jc = cupy.asarray(block.jc).astype(np.int64)
        lengths = cupy.zeros(block.shape[1] + 1, dtype=ptr.dtype)
        lengths[jc + 1] = cupy.diff(ptr)
        full = cupy.ascontiguousarray(cupy.cumsum(lengths, dtype=ptr.dtype))
        _FULL_PTR[block] = full
    return full, ind


class _Frontier:
    """A frontier the engine owns: a list (with degrees) or a bitmap, and its sizes."""

    __slots__ = ("buf", "fdeg", "k", "kind", "m")

    def __init__(self, kind: str, buf: Any, fdeg: Any, k: int, m: int) -> None:
        self.kind = kind  # "list" or "map"
        self.buf = buf  # vertex ids (list) or uint32 words (map)
        self.fdeg = fdeg  # degrees aligned with a list, or None
        self.k = k  # number of vertices
        self.m = m  # sum of their degrees

    def __len__(self) -> int:
        return self.k

    @property
    def shape(self) -> tuple[int]:
        """``(k,)``, like the id array it stands for (the driver reads ``shape[0]``)."""
        return (self.k,)

    def __repr__(self) -> str:
        return f"_Frontier({self.kind}, k={self.k}, m={self.m})"


class _Workspace:
    """Device buffers and constants of one (graph, direction): reused by its searches.

    Building them costs more than a small search (allocations, a degree sum, the
    device query), so they are cached per block; a workspace in use by a live
    engine is never shared (two searches of one graph at once get two).
    """

    def __init__(self, out_block: Any, in_block: Any, deg: Any) -> None:
        import cupy

        n = int(out_block.shape[0])
        self.n = n
        self.nwords = (n + 31) // 32
        self.deg = cupy.ascontiguousarray(cupy.asarray(deg, dtype=np.int64))
        self.deg_src = deg
        self.in_ref = weakref.ref(in_block)
        self.total_degree = int(self.deg.sum())
        self.out_ptr, self.out_ind = _device_csr(out_block)
        # The direction test weighs the in-edges of the unvisited vertices (what a bottom-up
        # sweep reads): the kernels sum ``indeg`` of the vertices they find where it is not
        # ``deg``, and an undirected graph, whose two blocks are one, pays nothing for it.
        self.directed = in_block is not out_block
        if self.directed:
            self.in_ptr, self.in_ind = _device_csr(in_block)
            self.indeg = cupy.ascontiguousarray(cupy.diff(self.in_ptr).astype(np.int64))
        else:
            self.in_ptr, self.in_ind = self.out_ptr, self.out_ind
            self.indeg = self.deg
        self.vid = np.dtype(np.int32 if n <= _INT32_MAX else np.int64)
        self.k_out = _kernels(self.out_ind.dtype, self.out_ptr.dtype, self.vid)
        self.k_in = _kernels(self.in_ind.dtype, self.in_ptr.dtype, self.vid)
        sms = _sm_count()
        self.td_grid_cap = sms * 8
        self.bu_grid = max(1, min(math.ceil(self.nwords / (_BU_THREADS // 32)), sms * 16))
        cap = max(n, 1)
        self.stamp = cupy.empty(cap, dtype=np.int32)
        self.vis = cupy.zeros(self.nwords + 1, dtype=np.uint32)
        self.map_a = cupy.zeros(self.nwords + 1, dtype=np.uint32)
        self.map_b = cupy.zeros(self.nwords + 1, dtype=np.uint32)
        self.list_a = cupy.empty(cap, dtype=self.vid)
        self.list_b = cupy.empty(cap, dtype=self.vid)
        self.fdeg_a = cupy.empty(cap, dtype=np.int64)
        self.fdeg_b = cupy.empty(cap, dtype=np.int64)
        self.inc: Any = None
        # Cumulative counters (never reset) and the values last read from them.
        self.ctr = cupy.zeros(_NCTR, dtype=np.int64)
        self.seen = [0] * _NCTR
        # Fused kernel: header (8 words) then 4 words per level.
        self.fbuf = cupy.zeros(8 + 4 * _FUSED_MAXLEV, dtype=np.int64)
        self.host_ctr = _pinned(_NCTR)
        self.host_f = _pinned(8 + 4 * _FUSED_ROWS)
        self.owner: Any = None

    def usable(self, in_block: Any, deg: Any) -> bool:
        idle = self.owner is None or self.owner() is None
        return idle and self.in_ref() is in_block and self.deg_src is deg


def _pinned(size: int) -> np.ndarray:
    try:
        import cupyx

        return cupyx.zeros_pinned(size, dtype=np.int64)
    except Exception:  # pinned memory is an optimisation only
        return np.zeros(size, dtype=np.int64)


_WORKSPACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MAX_WORKSPACES = 4  # per block: both directions and a concurrent search or two


def _workspace(out_block: Any, in_block: Any, deg: Any) -> _Workspace:
    spaces = _WORKSPACES.setdefault(out_block, [])
    for ws in spaces:
        if ws.usable(in_block, deg):
            return ws
    ws = _Workspace(out_block, in_block, deg)
    spaces.append(ws)
    if len(spaces) > _MAX_WORKSPACES:
        for old in spaces:
            if old is not ws and (old.owner is None or old.owner() is None):
                spaces.remove(old)
                break
    return ws


class _CudaEngine(LocalEngine):
    """BFS steps on custom CUDA kernels; an :class:`~spbfs.search.driver.Engine`.

    Parameters
    ----------
    xp : module
        Ignored (always cupy); accepted so the class can stand in for
        ``VectorizedEngine(xp, out_block, in_block, deg)``.
    out_block, in_block : Block
        Column ``u`` of ``out_block`` lists the vertices ``u`` reaches
        (top-down); column ``v`` of ``in_block`` the vertices reaching ``v``
        (bottom-up). csr or dcsc, on any backend (moved to the GPU).
    deg : array
        Degree of every vertex in the traversal direction.
    config : Config, optional
        ``cuda_fused=False`` runs one top-down level per launch; default ``Config()``.
    """

    #: Number of searches bound so far (lets tests check which engine ran).
    searches = 0

    def __init__(self, xp: Any, out_block: Any, in_block: Any, deg: Any,
                 config: Config | None = None) -> None:
        import cupy

        self.xp = cupy
        ws = _workspace(out_block, in_block, deg)
        ws.owner = weakref.ref(self)
        self.ws = ws
        for name in ("n", "nwords", "deg", "indeg", "directed", "total_degree", "out_ptr",
                     "out_ind", "in_ptr", "in_ind", "vid", "k_out", "k_in", "td_grid_cap",
                     "bu_grid", "stamp", "vis", "map_a", "map_b", "list_a", "list_b", "fdeg_a",
                     "fdeg_b", "ctr", "fbuf"):
            setattr(self, name, getattr(ws, name))
        self.m_in = self.total_degree  # in-edges of the unvisited vertices (directed graphs)
        if not _config(config).cuda_fused:
            self.topdown_levels = None  # the driver then runs one level per call

    # -- state -------------------------------------------------------------------
    def bind(self, parents: Any, levels: Any, want_levels: bool) -> None:
        """Attach the result arrays (all -1; :meth:`start` marks the source)."""
        if parents.dtype != np.int64 or not parents.flags.c_contiguous:
            raise TypeError("parents must be a contiguous int64 device array")
        self.parents, self.levels, self.want = parents, levels, bool(want_levels)
        _CudaEngine.searches += 1

    def start(self, source: int) -> tuple[Any, int]:
        """Mark ``source``, then derive the stamps and visited bits from the parents.

        The kernels skip a vertex by its stamp and bit, not its parent: built
        before the source had one, they would let a level claim it again.
        """
        frontier, deg_source = super().start(source)
        if self.directed:
            self.m_in = self.total_degree - int(self.indeg[source])
        grid = math.ceil(self.nwords * 32 / _CONV_THREADS)
        self.k_out["init_state"](
            (grid,), (_CONV_THREADS,),
            (self.parents, np.int64(self.n), np.int64(self.nwords), self.stamp, self.vis),
        )
        return frontier, deg_source

    def unvisited_in_edges(self) -> int | None:
        """The in-edges of the unvisited vertices (None where every edge goes both ways)."""
        return self.m_in if self.directed else None

    def _read(self) -> list[int]:
        """Counter increments since the last read (the one device-to-host copy of a level);
        the in-edges of the vertices found leave :meth:`unvisited_in_edges`."""
        host = self.ws.host_ctr
        self.ctr.get(out=host)
        now = [int(x) for x in host]
        diff = [a - b for a, b in zip(now, self.ws.seen, strict=True)]
        self.ws.seen = now
        self.m_in -= diff[_C_INSUM]
        return diff

    def _as_list(self, frontier: Any) -> _Frontier:
        if isinstance(frontier, _Frontier):
            return frontier if frontier.kind == "list" else self.to_list(frontier)
        # A caller's id array (the driver's first frontier): one launch and one small copy
        # to learn its degree sum.
        ids = self.xp.ascontiguousarray(self.xp.asarray(frontier, dtype=np.int64))
        k = int(ids.shape[0])
        if k == 0:
            return _Frontier("list", self.list_b, None, 0, 0)
        self.k_out["prep_list"](
            (1,), (_CONV_THREADS,), (ids, np.int64(k), self.deg, self.list_b, self.fbuf)
        )
        host = self.ws.host_f[:8]
        self.fbuf[:8].get(out=host)
        return _Frontier("list", self.list_b, None, k, int(host[7]))

    def _empty_list(self) -> _Frontier:
        return _Frontier("list", self.list_a, self.fdeg_a, 0, 0)

    # -- steps -------------------------------------------------------------------
    def topdown(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        """One top-down level; returns (next list, new count, edges scanned, degree sum)."""
        fr = self._as_list(frontier)
        if fr.k == 0 or fr.m == 0:
            return self._empty_list(), 0, fr.m, 0
        if fr.buf is self.list_a:
            nxt, nfd = self.list_b, self.fdeg_b
        else:
            nxt, nfd = self.list_a, self.fdeg_a
        common = (
            self.out_ptr, self.out_ind, self.deg, self.indeg, self.parents, self.levels,
            np.int64(self.want), self.stamp, self.vis, np.int64(depth), nxt, nfd, self.ctr,
            np.int64(self.ws.seen[_C_SLOTS]),
        )
        grid = max(1, min(math.ceil(fr.m / _TD_TILE), self.td_grid_cap))
        if fr.k <= SMALL:
            self.k_out["td_small"]((grid,), (_TD_THREADS,), (fr.buf, np.int64(fr.k), *common))
        else:
            fd = fr.fdeg[: fr.k] if fr.fdeg is not None else self.deg[fr.buf[: fr.k]]
            if self.ws.inc is None:
                self.ws.inc = self.xp.empty(max(self.n, 1), dtype=np.int64)
            inc = self.ws.inc[: fr.k]
            if fr.k <= _SCAN_SMALL:
                self.k_out["scan_small"]((1,), (_SCAN_THREADS,), (fd, np.int64(fr.k), inc))
            else:
                self.xp.cumsum(fd, out=inc)
            self.k_out["td_large"](
                (grid,), (_TD_THREADS,), (fr.buf, np.int64(fr.k), inc, np.int64(fr.m), *common)
            )
        d = self._read()
        count, degsum = d[_C_SLOTS], d[_C_DEGSUM]
        return _Frontier("list", nxt, nfd, count, degsum), count, fr.m, degsum

    def topdown_levels(
        self, frontier: Any, depth: int, m_u: int, m_f: int, policy: Any,
        max_depth: int | None, target: int | None,
    ) -> tuple[Any, tuple[list, list, list, list], int, int, int, bool]:
        """Consecutive top-down levels in one launch while the frontier stays small.

        The contract of ``_NumbaEngine.topdown_levels`` (``m_f`` is not needed
        here: the frontier carries its degree sum): returns (frontier, (sizes, found,
        edges, seconds) per level, depth, m_u, m_f, switch), where ``switch`` asks the
        driver to consult the direction policy. Per-level seconds are device time
        (``%globaltimer``). A frontier too large for one block gets one ordinary level.
        """
        fr = self._as_list(frontier)
        if fr.k == 0:
            return fr, ([], [], [], []), depth, m_u, 0, False
        if fr.k > SMALL or fr.m > FUSED_EDGES:
            t0 = time.perf_counter()
            nxt, count, scanned, degsum = self.topdown(fr, depth + 1)
            dt = time.perf_counter() - t0
            return nxt, ([fr.k], [count], [scanned], [dt]), depth + 1, m_u - degsum, degsum, True
        if fr.buf is self.list_a:
            out, ofd = self.list_b, self.fdeg_b
        else:
            out, ofd = self.list_a, self.fdeg_a
        # The kernel's test is leave_top_down with gamma = inf (the GPU engine's policy),
        # weighing the in-edges of the unvisited vertices (m_u where every edge goes both ways).
        alpha, _, auto = policy.fused_switch
        m_in = self.m_in if self.directed else m_u
        self.k_out["td_fused"](
            (1,), (_FUSED_THREADS,),
            (fr.buf, np.int64(fr.k), np.int64(m_u), np.int64(m_in), np.int64(depth),
             np.int64(-1 if max_depth is None else max_depth),
             np.int64(-1 if target is None else target), np.float64(alpha),
             np.int64(auto), np.int64(FUSED_EDGES), np.int64(_FUSED_MAXLEV),
             self.out_ptr, self.out_ind, self.deg, self.indeg, self.parents, self.levels,
             np.int64(self.want), self.stamp, self.vis, out, ofd, self.fbuf[8:], self.fbuf),
        )
        host = self.ws.host_f
        self.fbuf[: host.shape[0]].get(out=host)  # header and the first levels: one copy
        nlev, depth, m_u, m_f, reason, k, m_in = (int(x) for x in host[:7])
        if self.directed:
            self.m_in = m_in
        if nlev == 0:
            return fr, ([], [], [], []), depth, m_u, m_f, reason != 0
        if nlev <= _FUSED_ROWS:
            st = host[8 : 8 + 4 * nlev].reshape(nlev, 4)
        else:
            st = self.fbuf[8 : 8 + 4 * nlev].get().reshape(nlev, 4)
        run = (st[:, 0].tolist(), st[:, 1].tolist(), st[:, 2].tolist(),
               (st[:, 3] * 1e-9).tolist())
        return _Frontier("list", out, ofd, k, m_f), run, depth, m_u, m_f, reason != 0

    def bottomup(self, front: Any, depth: int) -> tuple[Any, int, int, int]:
        """One bottom-up level; returns (next bitmap, new count, edges scanned, degree sum)."""
        fm = front if isinstance(front, _Frontier) and front.kind == "map" else self.to_map(front)
        nxt = self.map_b if fm.buf is self.map_a else self.map_a
        if self.n:
            self.k_in["bu_step"](
                (self.bu_grid,), (_BU_THREADS,),
                (np.int64(self.n), np.int64(self.nwords), self.in_ptr, self.in_ind, self.deg,
                 self.indeg, fm.buf, nxt, self.vis, self.parents, self.levels, np.int64(self.want),
                 self.stamp, np.int64(depth), self.ctr),
            )
        d = self._read()
        count, scanned, degsum = d[_C_BU_NEW], d[_C_BU_SCANNED], d[_C_DEGSUM]
        return _Frontier("map", nxt, None, count, degsum), count, scanned, degsum

    def to_map(self, frontier: Any) -> _Frontier:
        """List (or raw id array) to bitmap."""
        if isinstance(frontier, _Frontier) and frontier.kind == "map":
            return frontier
        fr = self._as_list(frontier)
        bm = self.map_a
        bm.fill(0)
        if fr.k:
            grid = max(1, min(math.ceil(fr.k / _CONV_THREADS), self.td_grid_cap))
            self.k_out["list_to_map"]((grid,), (_CONV_THREADS,), (fr.buf, np.int64(fr.k), bm))
        return _Frontier("map", bm, None, fr.k, fr.m)

    def to_list(self, front: Any) -> _Frontier:
        """Bitmap to list (unsorted: min-parent semantics need no order)."""
        if not isinstance(front, _Frontier):
            return self._as_list(front)
        if front.kind == "list":
            return front
        if front.k:
            grid = math.ceil(self.nwords / _CONV_THREADS)
            self.k_out["map_to_list"](
                (grid,), (_CONV_THREADS,),
                (front.buf, np.int64(self.nwords), self.deg, self.list_a, self.fdeg_a, self.ctr,
                 np.int64(self.ws.seen[_C_SLOTS])),
            )
            self.ws.seen[_C_SLOTS] += front.k
        return _Frontier("list", self.list_a, self.fdeg_a, front.k, front.m)


def _config(config: Config | None) -> Config:
    # The driver hands the search's config; a caller that hands none (a test's
    # stand-in factory) gets the defaults, not the environment.
    return config if config is not None else Config()


def make_engine(xp: Any, out_block: Any, in_block: Any, deg: Any,
                config: Config | None = None) -> _CudaEngine | None:
    """A :class:`_CudaEngine`, or None when disabled or the kernels do not compile.

    Parameters
    ----------
    xp : module
        cupy.
    out_block, in_block, deg
        As for :class:`_CudaEngine`.
    config : Config, optional
        The search's config: ``cuda_kernels=False`` disables the kernels (the
        caller then uses the vectorized cupy steps), ``cuda_fused=False``
        runs one level per launch. Default: ``Config()``.
    """
    config = _config(config)
    if not config.cuda_kernels:
        return None
    try:
        return _CudaEngine(xp, out_block, in_block, deg, config)
    except Exception as exc:  # compile or driver trouble: fall back, say why
        # The warnings registry shows it once per call site, not once per search.
        warnings.warn(
            f"spbfs: CUDA BFS kernels unavailable ({type(exc).__name__}: {exc}); "
            f"using the vectorized cupy steps",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
