// The command line and the printed words every GEMM sample shares: LOOP_STRING M N K bm bn bk at
// positions 0-6, the --k-blocks / --m-blocks / --n-blocks options, the first words of the header
// line and of memory messages.
#pragma once

#include <cstddef>
#include <string>

#include <weft/ops/gemm_loops.hpp>

#include "sample_args.hpp"

namespace weft::samples {

// Sets loops.dtype from USE_BF16 (bf16 when it is a non-zero integer; UsageError when it is
// not an integer), parses argv into `args` with the GEMM options added, allows at most
// `max` positional arguments (`form` lists them) and reads LOOP_STRING M N K bm bn bk into `loops`.
// Positions 7 and up are the sample's own. A first argument "auto" (weft-gemm's tuned mode) is the
// sample's to read: then only the options are.
void parse_gemm_arguments(SampleArgs& args, ops::GemmLoops& loops, int argc, char** argv, std::size_t max,
                          const char* form);

// The tuned mode's line, "auto M N K ...": when the first argument is "auto", reads M N K
// (positions 1-3) into `loops`, marks it "auto" (its loop_string) and returns true; at most `max`
// positional arguments (`form` lists them). The sample reads its own arguments after K, then
// resolves the configuration (gemm_auto.hpp). Returns false for any other line.
bool parse_auto_shape(const SampleArgs& args, ops::GemmLoops& loops, std::size_t max, const char* form);

// The optional precision argument at `position` (0-based): PARLOOPER's FP32 or BF16, or weft's
// FP64 (doubles; PARLOOPER's GEMMs have none). Sets loops.dtype, which parse_gemm_arguments set to
// bf16 when USE_BF16 asked for it: FP32 or FP64 against that is refused (weft::Error), and so are
// F16, BF8 and INT8, which weft has no kernels for (another precision's numbers would be reported
// under their tag); any other word is a UsageError. `program` names the sample in the refusals.
// Without the argument loops.dtype stays as it is.
void parse_gemm_precision(const SampleArgs& args, ops::GemmLoops& loops, std::size_t position, const char* program);

// "<program>: FP32, <loop_string>, M x N x K = 64 x 64 x 64, blocks 32 x 32 x 32" (BF16 in bf16):
// how the samples' header lines start.
std::string gemm_header(const char* program, const ops::GemmLoops& loops);

// "<program> with M x N x K = 64 x 64 x 64<shape_extra> (<buffers>[ and the check's reference])":
// what a memory message names.
std::string gemm_buffers(const char* program, const ops::GemmLoops& loops, const std::string& shape_extra,
                         const std::string& buffers, bool check);

}  // namespace weft::samples
