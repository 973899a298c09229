// A user's helper header in the shape of PARLOOPER's samples' common_utils.h: it defines, not just
// declares, the same kinds of global names (a frequency variable, timer and factorization
// functions), pulls in OpenMP and includes the loop header itself. The compatibility header must
// coexist with it, included before or after, in a file built as C++14.
#include <math.h>
#include <omp.h>
#include <unistd.h>

#include <vector>

#include <weft/parlooper/threaded_loops.h>

double ifreq = 0.0;

#if defined(__x86_64__)
static __inline__ unsigned long long rdtsc(void) {
  unsigned int low = 0, high = 0;
  __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
  return (static_cast<unsigned long long>(high) << 32) | low;
}
#else
static __inline__ unsigned long long rdtsc(void) {
  return static_cast<unsigned long long>(omp_get_wtime() * 1e9);
}
#endif

inline double getFreq() {
  const unsigned long long before = rdtsc();
  usleep(1000);
  return static_cast<double>(rdtsc() - before) * 1000.0;
}

inline double getTime() { return static_cast<double>(rdtsc()) * ifreq; }

// Prime factors of n in increasing order ({1} for 1), for PARLOOPER-style default block sizes.
void find_prime_factors(long n, std::vector<long>& factors) {
  if (n == 1) factors.push_back(1);
  for (long p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  }
  if (n > 1) factors.push_back(n);
}

void init_buf(float* buf, long size, int seed) {
  for (long i = 0; i < size; ++i) buf[i] = static_cast<float>((i * 7 + seed * 13) % 17) / 17.0f - 0.5f;
}
