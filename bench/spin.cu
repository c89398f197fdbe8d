// A persistent kernel that holds SMs, as a communication library's kernels
// do: each CTA spins on the global timer for `ns` nanoseconds. Launched with
// most of an SM's shared memory, a CTA takes its SM to itself, so `grid`
// CTAs keep `grid` SMs from every kernel that needs shared memory.
// (bench/prefill_overlap_load.py; compiled with nvcc -cubin on the build machine.)
extern "C" __global__ void spin(unsigned long long ns) {
  extern __shared__ int hold[];
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  if (threadIdx.x == 0 && ns == 0)
    hold[0] = 0; // keeps the shared array (never taken: ns > 0)
}
