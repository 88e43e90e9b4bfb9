// The OpenMP wait policy of the command line and the benchmarks (programs, which may choose their
// own environment; the libraries never set it): passive with a short spin, so that oneDNN's
// threads sleep soon after a parallel region ends instead of spinning on the cores collage's own
// thread pool needs, but not before the next kernel's region has started.
#pragma once

namespace collage::cli {

// libgomp's spin before a thread sleeps, in polls (a pause each, about 25 ns on the development
// machines' Xeons): about 50 us, as long as collage's own pools poll. With the passive policy
// alone (no spin), every oneDNN primitive woke its team through the kernel, and two threads were
// slower than one: MobileNetV2 single:dnnl as an artifact, on two otherwise idle cores
// (SCHED_FIFO), 6.7-6.9 ms per run with 0.65 s of system time in 200 runs; with this spin
// 3.4-3.5 ms and 0.05 s (one core: 6.0 ms). 100 polls: 6.7 ms, 300: 4.6, 1000: 3.46, 3000: 3.49.
// On an oversubscribed machine the spin costs instead (same artifact, normal priority, load 8.5
// on 2 cores: 24.6 ms against 14.1 passive alone; bench/RESULTS.md, "Both cores on small
// convolutions"): GOMP_SPINCOUNT=0 in the environment gives the passive policy alone.
inline constexpr const char* kOpenMpSpinCount = "2000";

// Debian's oneDNN runs on libgomp, whose workers by default spin for GOMP_SPINCOUNT (300000)
// iterations after every parallel region (milliseconds), on the cores the next kernel of another
// backend, run by collage's thread pool, needs. libgomp reads OMP_WAIT_POLICY once, in its own
// constructor, before main() and before any constructor of ours (a dependency initialises first;
// and a setenv() from .preinit_array is lost, since libc sets up `environ` after it), and it has
// no call to change the policy later (omp_pause_resource_all frees the threads but the next
// region spins again). So a program that links oneDNN can only get the passive policy by starting
// again with it set: when OMP_WAIT_POLICY is unset, this sets it to "passive" (and
// GOMP_SPINCOUNT, when unset, to kOpenMpSpinCount) and re-executes
// /proc/self/exe with `argv`; it returns (doing nothing) when the variable is set, which leaves
// the user's choice alone, or when the exec fails. Call it first thing in main().
//
// Measured (2 cores under a load average of 11, four rounds alternating the two, each the median
// of 5 runs of `collage run resnet50_small.onnx --placement single:dnnl --repeat 5 --warmup 1`):
// libgomp's default policy 369, 434, 492, 237 ms (4.3 / 1.1 / 1.4 / 1.3 s user CPU); passive, as
// this makes it, 46, 51, 49, 40 ms (0.1 s user CPU): 8.5x faster.
void use_passive_openmp_wait(char** argv);

}  // namespace collage::cli
