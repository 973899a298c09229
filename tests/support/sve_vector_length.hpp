// This thread's SVE vector length, for tests that run SVE code at each length the CPU offers
// (qemu-aarch64's "max" CPU offers 128..2048 bits; prctl(PR_SVE_SET_VL) changes it for this thread
// and the threads it starts later). Code generated for one length runs at that length only: a test
// sets the length, then generates and runs, and puts the length back (ScopedVectorLength).
//
//   weft::test::ScopedVectorLength vl(32);
//   if (!vl.ok()) GTEST_SKIP() << "no 256-bit SVE";
#pragma once

#if defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

namespace weft::test {

#if defined(__aarch64__)
inline constexpr int kPrSveSetVl = 50;  // PR_SVE_SET_VL / PR_SVE_GET_VL (linux/prctl.h, 4.15+)
inline constexpr int kPrSveGetVl = 51;
inline constexpr int kPrSveVlLenMask = 0xffff;
inline constexpr unsigned long kHwcapSve = 1ul << 22;

inline bool has_sve() { return (getauxval(AT_HWCAP) & kHwcapSve) != 0; }

// This thread's vector length in bytes; 0 without SVE.
inline int vector_length() {
  if (!has_sve()) return 0;
  const int result = prctl(kPrSveGetVl, 0, 0, 0, 0);
  return result < 0 ? 0 : (result & kPrSveVlLenMask);
}

// Sets this thread's vector length; false if the CPU cannot give exactly `bytes`.
inline bool set_vector_length(int bytes) {
  if (!has_sve()) return false;
  const int result = prctl(kPrSveSetVl, bytes, 0, 0, 0);
  return result >= 0 && (result & kPrSveVlLenMask) == bytes;
}
#else
inline bool has_sve() { return false; }
inline int vector_length() { return 0; }
inline bool set_vector_length(int) { return false; }
#endif

// Sets the vector length for a scope and restores the previous one after it.
class ScopedVectorLength {
 public:
  explicit ScopedVectorLength(int bytes) : previous_(vector_length()), ok_(set_vector_length(bytes)) {}
  ~ScopedVectorLength() {
    if (previous_ > 0) set_vector_length(previous_);
  }
  ScopedVectorLength(const ScopedVectorLength&) = delete;
  ScopedVectorLength& operator=(const ScopedVectorLength&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_;
  bool ok_;
};

}  // namespace weft::test
