#include "weft/jit/aarch64/code_buffer.hpp"

#include <vector>

#include "weft/jit/error.hpp"
#include "weft/jit/log.hpp"
#include "weft/jit/perf_map.hpp"

namespace weft::jit::a64 {

CodeBuffer::~CodeBuffer() { arena_->release(installed_); }

const void* CodeBuffer::finalize_raw(std::string_view name) {
  if (installed_ != nullptr) throw Error("code buffer '" + name_ + "' finalized twice");
  std::vector<std::uint8_t> code;
  try {
    code = bytes();  // throws while a used label is unbound
  } catch (const Error& e) {
    throw Error("jit: " + std::string(name) + ": " + e.what());
  }
  installed_ = arena_->install(code.data(), code.size(), name);
  installed_size_ = code.size();
  name_ = std::string(name);
  perf_map_register(installed_, installed_size_, name_);
  const auto elapsed = std::chrono::steady_clock::now() - created_;
  log().debug("jit: {} at {} ({} bytes, {:.1f} us)", name_, installed_, installed_size_,
              std::chrono::duration<double, std::micro>(elapsed).count());
  return installed_;
}

std::span<const std::uint8_t> CodeBuffer::code_bytes() const {
  if (installed_ != nullptr) return {static_cast<const std::uint8_t*>(installed_), installed_size_};
  // The words in memory order are the little-endian code on a little-endian host (AArch64 Linux).
  const std::vector<std::uint32_t>& w = words();
  return {reinterpret_cast<const std::uint8_t*>(w.data()), w.size() * sizeof(std::uint32_t)};
}

}  // namespace weft::jit::a64
