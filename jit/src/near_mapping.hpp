// Mappings placed close to weft's own machine code (within a few hundred MiB), rather than wherever
// mmap puts them. Calls between generated code and compiled code (a loop nest calling the body's
// trampoline, user code calling a kernel) then stay within rel32 reach of each other. On Zen 3 the
// nest's per-body-call overhead measured 2.50 ns with the code far away and 1.56 ns with it near
// (docs/jit_engine.md): branch prediction handles nearby targets better.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::jit::detail {

// mmap(bytes, prot, MAP_SHARED, fd, offset) just below weft's code, within 1 GiB of it; anywhere
// once that range is used up. bytes is a multiple of the page size. Returns nullptr (errno set)
// when mmap fails.
void* map_near(std::size_t bytes, int prot, int fd, std::uint64_t offset);

}  // namespace weft::jit::detail
