// Test hooks of CodeBuffer. Both act on the calling thread only, so other threads are unaffected:
//
//   weft::jit::x64::testing::FinalizedCodeLog log;   // records what this thread finalizes from now on
//   {
//     weft::jit::x64::testing::ScratchShift shift(4096 + 64);  // later scratch buffers move by that much
//     auto engine = make_jit_engine(nest);
//   }
//   log.entries().back().bytes;                  // the code as installed; .scratch: where emitted
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace weft::jit::x64::testing {

struct FinalizedCode {
  std::string name;
  std::uintptr_t scratch = 0;      // where it was emitted
  std::size_t scratch_bytes = 0;   // the scratch buffer's size (CodeBuffer's max_size)
  const void* code = nullptr;      // where it runs
  std::vector<std::uint8_t> bytes;
};

// While it lives, every CodeBuffer finalized on this thread is appended to it. Nests: the
// innermost one records, the outer one resumes when it is destroyed.
class FinalizedCodeLog {
 public:
  FinalizedCodeLog();
  ~FinalizedCodeLog();
  FinalizedCodeLog(const FinalizedCodeLog&) = delete;
  FinalizedCodeLog& operator=(const FinalizedCodeLog&) = delete;

  const std::vector<FinalizedCode>& entries() const { return entries_; }
  void append(FinalizedCode code) { entries_.push_back(std::move(code)); }
  void clear() { entries_.clear(); }

 private:
  FinalizedCodeLog* previous_;
  std::vector<FinalizedCode> entries_;
};

// While it lives, scratch buffers of CodeBuffers constructed on this thread start `bytes` later
// than they would (a multiple of CodeArena::kAlignment, else weft::Error), so that a test can emit
// the same code at two scratch addresses and compare the bytes.
class ScratchShift {
 public:
  explicit ScratchShift(std::size_t bytes);
  ~ScratchShift();
  ScratchShift(const ScratchShift&) = delete;
  ScratchShift& operator=(const ScratchShift&) = delete;

 private:
  std::size_t previous_;
};

}  // namespace weft::jit::x64::testing
