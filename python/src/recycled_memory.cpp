// Recycled memory for the large tensors weft.torch hands to PyTorch (outputs, gradients, blocked
// copies): weft._weft.recycled_block(nbytes) is a writable buffer that torch.frombuffer wraps, and
// when the last tensor on it is freed its memory goes back to a free list here, pages still
// mapped, instead of back to the system.
//
// Why: glibc gives freed blocks of megabytes back to the kernel (munmap, or trimming the heap), so
// a training step that frees its gradients and allocates them again faults every page in anew, and
// on virtual machines a fault costs microseconds (12 us per 4 KiB page on a Zen 5 guest: 48 ms to
// first touch 16 MB). Blocks of 2 MiB and more are also aligned to 2 MiB and advised as huge pages
// (MADV_HUGEPAGE, for kernels whose transparent huge pages are "madvise"): one fault per 2 MiB,
// and fewer TLB misses for the kernels that stream them.
//
// A block is reused only after its Python object is gone, that is after every tensor on it is:
// torch.frombuffer holds a reference to the block for as long as its storage lives. The free list
// keeps at most recycled_memory_limit() bytes (an eighth of the machine's memory unless set); a
// block returned beyond that is freed.
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "bindings.hpp"
#include "buffers.hpp"
#include "weft/jit/error.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;

constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

// What a request of `bytes` is allocated as: whole cache lines, whole huge pages from 2 MiB on
// (a free block serves any request of its size class).
std::size_t size_class(std::size_t bytes) {
  return bytes >= kHugePageBytes ? round_up(bytes, kHugePageBytes) : round_up(bytes, kLineBytes);
}

class RecycledPool {
 public:
  void* take(std::size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = free_.find(size);
      if (found != free_.end() && !found->second.empty()) {
        void* block = found->second.back();
        found->second.pop_back();
        cached_bytes_ -= size;
        in_use_bytes_ += size;
        ++reuses_;
        return block;
      }
    }
    void* block = allocate(size);
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_bytes_ += size;
    ++allocations_;
    return block;
  }

  void give_back(void* block, std::size_t size) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_use_bytes_ -= size;
      if (cached_bytes_ + size <= limit_bytes_) {
        try {
          free_[size].push_back(block);
          cached_bytes_ += size;
          return;
        } catch (const std::bad_alloc&) {
          // no room to remember it: freed below
        }
      }
    }
    std::free(block);
  }

  // Frees every block on the free lists (blocks in use come back later, under the limit).
  void release() {
    std::unordered_map<std::size_t, std::vector<void*>> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks.swap(free_);
      cached_bytes_ = 0;
    }
    for (auto& [size, list] : blocks) {
      for (void* block : list) std::free(block);
    }
  }

  // A limit below what is cached frees the free lists.
  void set_limit(std::size_t bytes) {
    bool over = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      limit_bytes_ = bytes;
      over = cached_bytes_ > bytes;
    }
    if (over) release();
  }

  py::dict stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    py::dict d;
    d["cached_bytes"] = cached_bytes_;
    d["in_use_bytes"] = in_use_bytes_;
    d["limit_bytes"] = limit_bytes_;
    d["allocations"] = allocations_;
    d["reuses"] = reuses_;
    return d;
  }

 private:
  static void* allocate(std::size_t size) {
    const bool huge = size >= kHugePageBytes;
    void* block = std::aligned_alloc(huge ? kHugePageBytes : kLineBytes, size);
    if (block == nullptr) throw MemoryError("a weft.torch tensor", size, MemoryError::Reason::allocation_failed);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge) ::madvise(block, size, MADV_HUGEPAGE);  // advice only: without it the block works as well
#endif
    return block;
  }

  static std::size_t default_limit() {
    const std::uint64_t machine = physical_memory_bytes();
    return machine == kBytesOverflow ? std::size_t{1} << 30 : static_cast<std::size_t>(machine / 8);
  }

  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;  // size class -> free blocks
  std::size_t cached_bytes_ = 0;
  std::size_t in_use_bytes_ = 0;
  std::size_t limit_bytes_ = default_limit();
  std::uint64_t allocations_ = 0;
  std::uint64_t reuses_ = 0;
};

// Never destroyed: blocks may come back while the interpreter shuts down.
RecycledPool& pool() {
  static auto* instance = new RecycledPool();
  return *instance;
}

// A block of the pool as a Python buffer (bytes, writable); its memory returns to the pool when the
// object is freed.
class RecycledBlock {
 public:
  explicit RecycledBlock(std::size_t bytes) : bytes_(bytes), size_(size_class(bytes)), data_(pool().take(size_)) {}
  ~RecycledBlock() { pool().give_back(data_, size_); }
  RecycledBlock(const RecycledBlock&) = delete;
  RecycledBlock& operator=(const RecycledBlock&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;  // asked for: the buffer's length
  std::size_t size_;   // allocated: its size class
  void* data_;
};

}  // namespace

void bind_recycled_memory(py::module_& m) {
  py::class_<RecycledBlock>(m, "RecycledBlock", py::buffer_protocol(),
                            "Memory of weft's recycling pool as a writable buffer of bytes (torch.frombuffer wraps "
                            "it); back to the pool when freed")
      .def_buffer([](RecycledBlock& block) {
        return py::buffer_info(block.data(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(block.bytes())}, {py::ssize_t{1}}, /*readonly=*/false);
      })
      .def_property_readonly("nbytes", &RecycledBlock::bytes);
  m.def(
      "recycled_block",
      [](py::int_ nbytes) {
        const long long bytes = nbytes.cast<long long>();
        if (bytes < 1) throw_value_error("recycled_block: nbytes must be >= 1, got " + std::to_string(bytes));
        require_memory("a weft.torch tensor", static_cast<std::uint64_t>(bytes));
        return new RecycledBlock(static_cast<std::size_t>(bytes));
      },
      py::arg("nbytes"), py::return_value_policy::take_ownership,
      "A block of nbytes from the recycling pool (a free block of its size class, else a new one)");
  m.def(
      "release_recycled_memory", [] { pool().release(); },
      "Frees the pool's free blocks (blocks in use return to it when freed)");
  m.def(
      "set_recycled_memory_limit",
      [](py::int_ nbytes) {
        const long long bytes = nbytes.cast<long long>();
        if (bytes < 0) throw_value_error("set_recycled_memory_limit: nbytes must be >= 0, got " + std::to_string(bytes));
        pool().set_limit(static_cast<std::size_t>(bytes));
      },
      py::arg("nbytes"), "How many bytes of free blocks the pool keeps at most (0: none)");
  m.def("recycled_memory_stats", [] { return pool().stats(); },
        "The pool's bytes cached and in use, its limit, and how many blocks it allocated and reused");
}

}  // namespace weft::python
