// Checking a pass's configuration without generating its code. A pass (ConvFwd, GemmFwd,
// ...) is set up by one private constructor that takes a PassCode: with PassCode::build it
// generates its kernels and loop nests, with PassCode::check it goes through the very same steps
// (configuration rules, loop_string and nest rules, the list of kernel descriptors) but only plans
// what it would generate: each kernel descriptor through its TPP's pure plan function, each loop
// nest parsed and its bounds checked. The pass's static check() is that second mode, so it throws
// exactly the weft::Error the constructor would, and the tuned-configuration lookups
// (best_conv_config, best_gemm_config) try stored records without generating code.
//
//   std::vector<tpp::Brgemm> kernels = make_kernels<tpp::Brgemm>(descs, code);  // empty with check
//   std::optional<tpp::Unary> copy = make_kernel<tpp::Unary>(desc, code);       // nullopt with check
//   const parlooper::LoopNest nest = checked_nest(loop_string, specs);        // then the pass's nest rules
//   if (code == PassCode::build) loop.emplace(specs, loop_string);
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/binary.hpp>
#include <weft/tpp/brgemm.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

enum class PassCode {
  build,  // generate the kernels and loop nests (or take them from their caches)
  check,  // plan them only: the same errors, no code
};

// Validates and plans the kernel of `desc` for the ISA a kernel would be built for
// (jit::selected_isa()): what the kernel's constructor throws, without generating it.
void plan_kernel(const tpp::BrgemmDesc& desc);
void plan_kernel(const tpp::UnaryDesc& desc);
void plan_kernel(const tpp::BinaryDesc& desc);

// The kernel of `desc` (Kernel: tpp::Brgemm, tpp::Unary or tpp::Binary); with PassCode::check
// only planned, and nullopt.
template <class Kernel>
std::optional<Kernel> make_kernel(const typename Kernel::Desc& desc, PassCode code) {
  if (code == PassCode::check) {
    plan_kernel(desc);
    return std::nullopt;
  }
  return std::optional<Kernel>(std::in_place, desc);
}

// The kernels of `descs`, in order; with PassCode::check each is only planned, and none is returned.
template <class Kernel>
std::vector<Kernel> make_kernels(const std::vector<typename Kernel::Desc>& descs, PassCode code) {
  std::vector<Kernel> kernels;
  if (code == PassCode::build) kernels.reserve(descs.size());
  for (const auto& desc : descs) {
    if (std::optional<Kernel> kernel = make_kernel<Kernel>(desc, code)) kernels.push_back(std::move(*kernel));
  }
  return kernels;
}

// The nest of a ThreadedLoop over `specs` with `loop_string`, refused as its constructor refuses
// it (LoopStringError: parse_loop_string, then make_nest_bounds), without generating it.
parlooper::LoopNest checked_nest(const std::string& loop_string, std::span<const parlooper::LoopSpecs> specs);

// The ThreadedLoop<N> over `specs` with `loop_string`; with PassCode::check only checked_nest, and nullopt.
template <int N>
std::optional<parlooper::ThreadedLoop<N>> make_loop(const std::array<parlooper::LoopSpecs, N>& specs,
                                                    const std::string& loop_string, PassCode code) {
  if (code == PassCode::check) {
    checked_nest(loop_string, specs);
    return std::nullopt;
  }
  return std::optional<parlooper::ThreadedLoop<N>>(std::in_place, specs, loop_string);
}

}  // namespace weft::ops
