// The samples (and their tests and benchmarks) name the operators' building blocks, which live in
// ops/ (weft::ops), as their own: blocked layouts, passes, references and checks.
#pragma once

namespace weft::ops {}

namespace weft::samples {
using namespace weft::ops;
}  // namespace weft::samples
