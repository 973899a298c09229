#include <weft/ops/conv_workload.hpp>

#include <omp.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/ops/block_loops.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_model.hpp>
#include <weft/ops/conv_reference.hpp>
#include <weft/ops/verification.hpp>
#include <weft/tuner/tile_bound.hpp>

namespace weft::ops {

namespace {

// PARLOOPER's logical loops.
constexpr int kImages = 0, kCBlocks = 1, kKBlocks = 2, kRows = 3, kCols = 4, kTapR = 5, kTapS = 6;
constexpr std::size_t kLoops = 7;

std::string str(std::int64_t v) { return std::to_string(v); }

// What tells the passes apart: the reductions, the loops whose outer block a config field holds,
// and the spec's letter kinds (K: reduction).
struct PassFacts {
  std::array<bool, kLoops> reduction;
  std::vector<std::pair<int, const char*>> blockable;  // (loop, config field)
};

const PassFacts& facts(ConvPassKind pass) {
  static const PassFacts fwd{{false, true, false, false, false, true, true}, {{kKBlocks, "k_block"}, {kRows, "h_block"}}};
  static const PassFacts bwd{{false, false, true, false, false, true, true}, {{kCBlocks, "c_block"}, {kRows, "h_block"}}};
  static const PassFacts upd{{true, false, false, true, true, false, false}, {}};
  switch (pass) {
    case ConvPassKind::fwd: return fwd;
    case ConvPassKind::bwd: return bwd;
    case ConvPassKind::upd: return upd;
  }
  return fwd;
}

std::int64_t blocks_of(std::int64_t size, long block) { return (size + block - 1) / block; }

// The outer block of `loop` in `config` (0: not blocked); a block list the sample cannot take is
// an error.
std::int64_t outer_block(const tuner::TunedConfig& config, ConvPassKind pass, int loop) {
  const auto& own = facts(pass).blockable;
  for (int x = 0; x < static_cast<int>(kLoops); ++x) {
    const auto& b = config.blocks_of(x);
    if (b.empty()) continue;
    const bool takes = std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.first == x; });
    if (!takes || b.size() > 1) {
      throw Error("block list [" + std::string(1, static_cast<char>('a' + x)) + ":" + str(b.size()) +
                  " sizes]: weft-conv-" + std::string(to_string(pass)) +
                  " blocks each of its blockable loops once at most (fwd: c, d; bwd: b, d; upd: none)");
    }
  }
  const auto& b = config.blocks_of(loop);
  return b.empty() ? 0 : b.front();
}

template <class Config>
Config base_config(const tuner::TunedConfig& config, const ConvShape& shape) {
  Config c;
  c.shape = shape;
  c.loop_string = config.loop_string;
  c.bc = config.knob("bc", static_cast<long>(c.bc));
  c.bk = config.knob("bk", static_cast<long>(c.bk));
  c.h_in_gemm = config.knob("h_in_gemm", static_cast<long>(c.h_in_gemm));
  return c;
}

// The fields of the sample's default configuration that the tuner sets.
tuner::Knobs default_knobs(ConvPassKind pass) {
  switch (pass) {
    case ConvPassKind::fwd: {
      const ConvFwdConfig d;
      return {{"bc", d.bc}, {"bk", d.bk}, {"h_in_gemm", d.h_in_gemm}, {"w_block", d.w_block},
              {"c_block", d.c_block}, {"pack_input", d.pack_input ? 1 : 0}};
    }
    case ConvPassKind::bwd: {
      const ConvBwdConfig d;
      return {{"bc", d.bc}, {"bk", d.bk}, {"h_in_gemm", d.h_in_gemm}, {"w_block", d.w_block}, {"k_block", d.k_block}};
    }
    case ConvPassKind::upd: {
      const ConvUpdConfig d;
      return {{"bc", d.bc}, {"bk", d.bk}, {"h_in_gemm", d.h_in_gemm}};
    }
  }
  return {};
}

long knob_of(const tuner::Knobs& knobs, const std::string& name, long fallback) { return tuner::TunedConfig{knobs, "", {}}.knob(name, fallback); }

// Whether the sample accepts a knob setting for this shape (with its default loop string); generates no code.
bool accepted(ConvPassKind pass, const tuner::TunedConfig& config, const ConvShape& shape) {
  try {
    switch (pass) {
      case ConvPassKind::fwd: ConvFwd::check(to_conv_fwd_config(config, shape)); break;
      case ConvPassKind::bwd: ConvBwd::check(to_conv_bwd_config(config, shape)); break;
      case ConvPassKind::upd: ConvUpd::check(to_conv_upd_config(config, shape)); break;
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}
bool accepted(ConvPassKind pass, const tuner::Knobs& knobs, const ConvShape& shape) {
  return accepted(pass, tuner::TunedConfig{knobs, ConvLoops{}.loop_string, {}}, shape);
}

// Channel blocks: values below `channels`, then one block of all of them.
std::vector<long> channel_blocks(const std::vector<long>& values, std::int64_t channels) {
  std::vector<long> out;
  for (long v : std::set<long>(values.begin(), values.end())) {
    if (v >= channels) {
      out.push_back(static_cast<long>(channels));
      break;
    }
    out.push_back(v);
  }
  return out;
}

// Rows per GEMM: 1 and the values of `wanted` up to `rows`.
std::vector<long> rows_per_gemm(std::initializer_list<long> wanted, std::int64_t rows) {
  std::vector<long> out;
  for (long v : wanted)
    if (v <= rows) out.push_back(v);
  return out;
}

// Batch-reduce chunks of a reduction over `blocks` blocks: 1, and 2 when the chunks stay long.
std::vector<long> chunk_counts(std::int64_t blocks) { return blocks >= 8 ? std::vector<long>{1, 2} : std::vector<long>{1}; }

std::string shape_text(const ConvShape& s) {
  return "N=" + str(s.N) + " H=" + str(s.H) + " W=" + str(s.W) + " C=" + str(s.C) + " K=" + str(s.K) + " R=" +
         str(s.R) + " S=" + str(s.S) + " stride " + str(s.stride_h) + " " + str(s.stride_w) + " pad " + str(s.pad_h) +
         " " + str(s.pad_w);
}

}  // namespace

std::string_view to_string(ConvPassKind pass) {
  switch (pass) {
    case ConvPassKind::fwd: return "fwd";
    case ConvPassKind::bwd: return "bwd";
    case ConvPassKind::upd: return "upd";
  }
  return "?";
}

ConvPassKind parse_conv_pass(std::string_view name) {
  for (ConvPassKind pass : {ConvPassKind::fwd, ConvPassKind::bwd, ConvPassKind::upd})
    if (name == to_string(pass)) return pass;
  throw Error("'" + std::string(name) + "' is no convolution pass (fwd, bwd or upd)");
}

tuner::WorkloadKey conv_key(ConvPassKind pass, const ConvShape& s, int threads, jit::DataType dtype) {
  return {.kind = "conv_" + std::string(to_string(pass)),
          .shape = {{"N", s.N}, {"H", s.H}, {"W", s.W}, {"C", s.C}, {"K", s.K}, {"R", s.R}, {"S", s.S},
                    {"stride_h", s.stride_h}, {"stride_w", s.stride_w}, {"pad_h", s.pad_h}, {"pad_w", s.pad_w}},
          .dtype = dtype == jit::DataType::bf16 ? "bf16" : "fp32",
          .threads = threads};
}

ConvFwdConfig to_conv_fwd_config(const tuner::TunedConfig& config, const ConvShape& shape) {
  auto c = base_config<ConvFwdConfig>(config, shape);
  c.w_block = config.knob("w_block", static_cast<long>(c.w_block));
  c.c_block = config.knob("c_block", static_cast<long>(c.c_block));
  c.pack_input = config.knob("pack_input", c.pack_input ? 1 : 0) != 0;
  if (const auto k = outer_block(config, ConvPassKind::fwd, kKBlocks)) c.k_block = k;
  if (const auto h = outer_block(config, ConvPassKind::fwd, kRows)) c.h_block = h;
  return c;
}

ConvBwdConfig to_conv_bwd_config(const tuner::TunedConfig& config, const ConvShape& shape) {
  auto c = base_config<ConvBwdConfig>(config, shape);
  c.w_block = config.knob("w_block", static_cast<long>(c.w_block));
  c.k_block = config.knob("k_block", static_cast<long>(c.k_block));
  if (const auto b = outer_block(config, ConvPassKind::bwd, kCBlocks)) c.c_block = b;
  if (const auto h = outer_block(config, ConvPassKind::bwd, kRows)) c.h_block = h;
  return c;
}

ConvUpdConfig to_conv_upd_config(const tuner::TunedConfig& config, const ConvShape& shape) {
  outer_block(config, ConvPassKind::upd, kImages);  // refuses any block list
  return base_config<ConvUpdConfig>(config, shape);
}

tuner::TunedConfig default_conv_config(ConvPassKind pass, const ConvShape& shape, jit::DataType dtype) {
  tuner::Knobs knobs = default_knobs(pass);
  // Blocks no larger than the channels: conv1's C = 3 in a block of 32 would pad 29 zero channels
  // into every multiply (10 instead of 115 GFLOPS on Zen 4).
  for (auto& [name, value] : knobs) {
    if (name == "bc") value = std::min<long>(value, shape.C);
    if (name == "bk") value = std::min<long>(value, shape.K);
    // bf16: the filter's VNNI-2 pairs (C in every pass, K too backward by data).
    const bool paired = name == "bc" || (name == "bk" && pass == ConvPassKind::bwd);
    if (paired && dtype == jit::DataType::bf16) value += value % 2;
  }
  return {knobs, ConvLoops{}.loop_string, {}};
}

namespace {

// A problem of the shape and type alone, for the machine model.
template <class Config>
Config problem_of(const ConvShape& shape, jit::DataType dtype) {
  Config c;
  c.shape = shape;
  c.dtype = dtype;
  return c;
}

}  // namespace

tuner::TunedConfig untuned_conv_config(ConvPassKind pass, const ConvShape& shape, int threads, jit::DataType dtype) {
  // The machine model's choice where the sample takes it, else the default below.
  const ConvMachine machine = ConvMachine::current();
  try {
    if (pass == ConvPassKind::fwd) {
      const ConvFwdConfig c = model_conv_fwd_config(problem_of<ConvFwdConfig>(shape, dtype), threads, machine);
      ConvFwd::check(c);
      return {{{"bc", c.bc}, {"bk", c.bk}, {"h_in_gemm", c.h_in_gemm}, {"w_block", c.w_block},
               {"c_block", c.c_block}, {"pack_input", c.pack_input ? 1 : 0}}, c.loop_string, {}};
    }
    if (pass == ConvPassKind::bwd) {
      const ConvBwdConfig c = model_conv_bwd_config(problem_of<ConvBwdConfig>(shape, dtype), threads, machine);
      ConvBwd::check(c);
      return {{{"bc", c.bc}, {"bk", c.bk}, {"h_in_gemm", c.h_in_gemm}, {"w_block", c.w_block},
               {"k_block", c.k_block}}, c.loop_string, {}};
    }
    if (pass == ConvPassKind::upd) {
      const ConvUpdConfig c = model_conv_upd_config(problem_of<ConvUpdConfig>(shape, dtype), threads, machine);
      ConvUpd::check(c);
      return {{{"bc", c.bc}, {"bk", c.bk}, {"h_in_gemm", c.h_in_gemm}}, c.loop_string, {}};
    }
  } catch (const Error&) {
    // The default below.
  }
  return default_conv_config(pass, shape, dtype);
}

struct ConvWorkload::Data {
  std::mutex mutex;
  std::vector<float> first, second;  // the pass's inputs, plain: fwd input, filter; bwd grad_output, filter; upd input, grad_output
  std::vector<float> reference;      // the pass's output, plain
};

namespace {

// A pass's run and the plain view of its output, on blocked copies of the workload's inputs.
struct PassBinding {
  std::function<void()> run;
  std::function<void(float* plain)> output_to_plain;
  std::function<void()> poison_output;  // fills the output with NaN, so that the check sees what a run writes
  double tolerance = 0;                  // the pass's relative L2 tolerance (sum_tolerance, bf16 rounding)
};

class ConvRunner final : public tuner::Runner {
 public:
  ConvRunner(PassBinding binding, ConvWorkload::Data& data, std::function<void(std::vector<float>&)> reference)
      : binding_(std::move(binding)), data_(data), reference_(std::move(reference)) {}

  void run() override { binding_.run(); }

  tuner::CheckResult check() override {
    binding_.poison_output();
    binding_.run();
    std::lock_guard lock(data_.mutex);
    if (data_.reference.empty()) reference_(data_.reference);
    std::vector<float> plain(data_.reference.size());
    binding_.output_to_plain(plain.data());
    const ErrorNorms norms =
        compare(plain.data(), data_.reference.data(), static_cast<std::int64_t>(plain.size()));
    return {norms.passed(binding_.tolerance), norms.to_string()};
  }

 private:
  PassBinding binding_;
  ConvWorkload::Data& data_;
  std::function<void(std::vector<float>&)> reference_;
};

// Owns a pass and its blocked buffers.
template <class Pass>
struct Bound {
  template <class Config>
  explicit Bound(Config config) : pass(std::move(config)) {}
  Pass pass;
  std::vector<float> a, b, bias, out;
  std::vector<jit::bfloat16> a_bf16, b_bf16, bias_bf16, out_bf16;  // bf16
  std::function<void()> poison() {
    return [this] {
      std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
      std::fill(out_bf16.begin(), out_bf16.end(), jit::to_bfloat16(std::numeric_limits<float>::quiet_NaN()));
    };
  }
};

}  // namespace

ConvWorkload::ConvWorkload(ConvShape shape, ConvPassKind pass, ConvSearchOptions options)
    : shape_(shape), pass_(pass), options_(std::move(options)), data_(std::make_unique<Data>()) {
  shape_.validate();
  if (options_.dtype != jit::DataType::f32 && options_.dtype != jit::DataType::bf16)
    throw Error("ConvWorkload: data type " + std::string(jit::to_string(options_.dtype)) + " for the " +
                std::string(to_string(pass_)) + " pass: the samples run f32 or bf16");
  for (auto* list : {&options_.bc, &options_.bk}) {
    if (list->empty()) throw Error("ConvWorkload: bc and bk need at least one value each");
    for (long v : *list)
      if (v <= 0 || v > 4096) throw Error("ConvWorkload: channel block " + str(v) + " is out of range (1..4096)");
  }
  const ConvShape& s = shape_;
  const std::uint64_t input = bytes_needed({s.N, s.C, s.H, s.W}, sizeof(float));
  const std::uint64_t filter = bytes_needed({s.K, s.C, s.R, s.S}, sizeof(float));
  const std::uint64_t output = bytes_needed({s.N, s.K, s.ofh(), s.ofw()}, sizeof(float));
  // Plain inputs and reference, one blocked copy of everything and the check's plain output.
  require_memory(describe() + " (tensors, plain and blocked)",
                 add_bytes(add_bytes(add_bytes(input, input), add_bytes(filter, filter)),
                           add_bytes(add_bytes(output, output), add_bytes(output, output))));
  const auto fill = [&](std::vector<float>& v, std::uint64_t bytes, const char* name, std::uint64_t seed) {
    allocating(describe() + ": " + name, bytes, [&] { v.resize(static_cast<std::size_t>(bytes / sizeof(float))); });
    fill_random(v.data(), static_cast<std::int64_t>(v.size()), seed);
  };
  switch (pass_) {
    case ConvPassKind::fwd: fill(data_->first, input, "input", 1), fill(data_->second, filter, "filter", 2); break;
    case ConvPassKind::bwd: fill(data_->first, output, "grad_output", 1), fill(data_->second, filter, "filter", 2); break;
    case ConvPassKind::upd: fill(data_->first, input, "input", 1), fill(data_->second, output, "grad_output", 2); break;
  }
  // bf16: the inputs the run reads, so that the reference computes on the same values.
  if (options_.dtype == jit::DataType::bf16) {
    round_to_bf16(data_->first);
    round_to_bf16(data_->second);
  }

  // Every knob setting the sample accepts for this shape.
  std::vector<long> bcs = channel_blocks(options_.bc, s.C), bks = channel_blocks(options_.bk, s.K);
  if (options_.dtype == jit::DataType::bf16) {
    // The filter's VNNI-2 pairs run along C in every pass, and along K too in the backward pass by
    // data: an odd block there (C = 3) takes one zero channel more.
    std::vector<std::vector<long>*> paired{&bcs};
    if (pass_ == ConvPassKind::bwd) paired.push_back(&bks);
    for (std::vector<long>* blocks : paired) {
      for (long& b : *blocks) b += b % 2;
      std::sort(blocks->begin(), blocks->end());
      blocks->erase(std::unique(blocks->begin(), blocks->end()), blocks->end());
    }
  }
  std::vector<tuner::Knobs> candidates;
  for (long bc : bcs)
    for (long bk : bks) {
      const tuner::Knobs tiles{{"bc", bc}, {"bk", bk}};
      auto with = [&](tuner::Knobs more) {
        tuner::Knobs k = tiles;
        k.insert(k.end(), more.begin(), more.end());
        candidates.push_back(std::move(k));
      };
      switch (pass_) {
        case ConvPassKind::fwd: {
          const bool strided_1x1 = s.R == 1 && s.S == 1 && (s.stride_h > 1 || s.stride_w > 1);
          for (long pack : strided_1x1 ? std::vector<long>{0, 1} : std::vector<long>{0})
            for (long cb : chunk_counts(blocks_of(s.C, bc)))
              for (long hg : rows_per_gemm({1, 2, 4, 7}, s.ofh()))
                for (long wb : hg == 1 && s.ofw() >= 2 ? std::vector<long>{1, 2} : std::vector<long>{1})
                  with({{"h_in_gemm", hg}, {"w_block", wb}, {"c_block", cb}, {"pack_input", pack}});
          break;
        }
        case ConvPassKind::bwd: {
          const std::int64_t rows = s.stride_h == 1 && s.stride_w == 1 ? s.H : s.ofh();
          for (long kb : chunk_counts(blocks_of(s.K, bk)))
            for (long hg : rows_per_gemm({1, 2, 4, 7}, rows))
              for (long wb : hg == 1 && s.ofw() >= 2 ? std::vector<long>{1, 2} : std::vector<long>{1})
                with({{"h_in_gemm", hg}, {"w_block", wb}, {"k_block", kb}});
          break;
        }
        case ConvPassKind::upd: {
          std::set<long> rows{static_cast<long>(s.ofh())};
          for (long v : rows_per_gemm({1, 7}, s.ofh())) rows.insert(v);
          for (long hg : rows) with({{"h_in_gemm", hg}});
          break;
        }
      }
    }
  for (tuner::Knobs& k : candidates)
    if (accepted(pass_, k, s)) knob_choices_.push_back(std::move(k));
  if (options_.tile_bound && !knob_choices_.empty()) key(1);  // one bc and one bk, else throws
}

tuner::TunedConfig ConvWorkload::default_config(int threads) const {
  const tuner::TunedConfig untuned = untuned_conv_config(pass_, shape_, threads, options_.dtype);
  if (!options_.tile_bound) return untuned;
  // The baseline has the bound tiles too (the best may be the baseline, and a record of other
  // tiles is not what its key says): the untuned knobs where they take those tiles, else the
  // sample's default knobs.
  const tuner::Knobs tiles = key(threads).tiles;
  tuner::TunedConfig bound = tuner::with_tiles(untuned, tiles);
  if (accepted(pass_, bound, shape_)) return bound;
  return tuner::with_tiles(default_conv_config(pass_, shape_, options_.dtype), tiles);
}

tuner::WorkloadKey ConvWorkload::key(int threads) const {
  const tuner::WorkloadKey free = conv_key(pass_, shape_, threads, options_.dtype);
  return options_.tile_bound ? tuner::tile_bound_key(free, knob_choices_, {"bc", "bk"}) : free;
}

ConvWorkload::~ConvWorkload() = default;

std::string ConvWorkload::describe() const { return "conv " + std::string(to_string(pass_)) + " " + shape_text(shape_); }

std::vector<tuner::LogicalLoop> ConvWorkload::loops(const tuner::Knobs& knobs) const {
  const ConvShape& s = shape_;
  const long bc = knob_of(knobs, "bc", 32), bk = knob_of(knobs, "bk", 32);
  const std::int64_t cb = blocks_of(s.C, bc), kb = blocks_of(s.K, bk);
  const long hg = knob_of(knobs, "h_in_gemm", 1);
  std::array<std::int64_t, kLoops> trips{s.N, cb, kb, s.ofh(), s.ofw(), s.R, s.S};
  std::array<std::int64_t, kLoops> steps{1, 1, 1, hg, 1, s.R, s.S};
  switch (pass_) {
    case ConvPassKind::fwd:  // physical padding: batch-reduce mode, f and g in one step
      steps[kCBlocks] = chunk_step(cb, knob_of(knobs, "c_block", 1));
      steps[kCols] = chunk_step(s.ofw(), knob_of(knobs, "w_block", 1));
      break;
    case ConvPassKind::bwd: {
      const bool gather = s.stride_h == 1 && s.stride_w == 1;
      if (gather) trips[kRows] = s.H, trips[kCols] = s.W;
      if (!gather && (s.R > 1 || s.S > 1)) steps[kTapR] = steps[kTapS] = 1;  // scatter per tap
      steps[kKBlocks] = chunk_step(kb, knob_of(knobs, "k_block", 1));
      steps[kCols] = chunk_step(trips[kCols], knob_of(knobs, "w_block", 1));
      break;
    }
    case ConvPassKind::upd:
      steps[kRows] = hg > 0 ? hg : s.ofh();
      steps[kCols] = s.ofw();
      steps[kTapR] = steps[kTapS] = 1;
      break;
  }
  std::array<bool, kLoops> reduction = facts(pass_).reduction;
  if (pass_ == ConvPassKind::bwd && (s.stride_h > 1 || s.stride_w > 1) && (s.R > 1 || s.S > 1)) {
    // The per-tap scatter: output rows (columns) whose taps overlap add into the same grad_input
    // rows (columns), as a reduction does (ConvBwd refuses them in parallel).
    reduction[kRows] = s.R > s.stride_h;
    reduction[kCols] = s.S > s.stride_w;
  }
  std::vector<tuner::LogicalLoop> loops;
  for (std::size_t x = 0; x < kLoops; ++x)
    loops.push_back({0, static_cast<long>(trips[x]), static_cast<long>(steps[x]), reduction[x]});
  return loops;
}

std::vector<tuner::LoopSpecification> ConvWorkload::specs(const tuner::Knobs& knobs) const {
  if (!options_.specs.empty()) return options_.specs;
  const PassFacts& f = facts(pass_);
  const auto l = loops(knobs);
  auto spec_with = [&](int blocked) {
    tuner::LoopSpecification spec;
    for (int x = 0; x < static_cast<int>(kLoops); ++x)
      spec.loops.push_back({.letter = static_cast<char>('a' + x),
                            .extra_levels = x == blocked ? 1 : 0,
                            .kind = l[static_cast<std::size_t>(x)].reduction ? 'K' : 'M'});
    return spec;
  };
  std::vector<tuner::LoopSpecification> specs{spec_with(-1)};
  for (const auto& [loop, field] : f.blockable) specs.push_back(spec_with(loop));
  return specs;
}

tuner::CostInputs ConvWorkload::cost_inputs(const tuner::Knobs& knobs) const {
  const ConvShape& s = shape_;
  const auto l = loops(knobs);
  const double bc = static_cast<double>(knob_of(knobs, "bc", 32)), bk = static_cast<double>(knob_of(knobs, "bk", 32));
  auto step = [&](int x) { return static_cast<double>(std::min(l[static_cast<std::size_t>(x)].step, l[static_cast<std::size_t>(x)].end)); };
  const double rows = step(kRows), cols = step(kCols), taps = step(kTapR) * step(kTapS);
  const double window = (rows * static_cast<double>(s.stride_h) + static_cast<double>(s.R) - 1) *
                        (cols * static_cast<double>(s.stride_w) + static_cast<double>(s.S) - 1);
  const double f4 = static_cast<double>(jit::size_of(options_.dtype));  // bytes per element
  const std::vector<int> pixels{kImages, kRows, kCols}, taps_loops{kTapR, kTapS};
  auto with = [](std::vector<int> a, std::initializer_list<int> b) {
    a.insert(a.end(), b);
    return a;
  };
  tuner::CostInputs in;
  double out_rows = bk;
  switch (pass_) {
    case ConvPassKind::fwd:
      in.tensors = {{"input", with(pixels, {kCBlocks, kTapR, kTapS}), f4 * bc * step(kCBlocks) * window, false},
                    {"filter", {kCBlocks, kKBlocks, kTapR, kTapS}, f4 * bc * bk * step(kCBlocks) * taps, false},
                    {"output", with(pixels, {kKBlocks}), f4 * bk * rows * cols, true}};
      break;
    case ConvPassKind::bwd:
      out_rows = bc;
      in.tensors = {{"grad_output", with(pixels, {kKBlocks, kTapR, kTapS}), f4 * bk * step(kKBlocks) * window, false},
                    {"filter", {kCBlocks, kKBlocks, kTapR, kTapS}, f4 * bc * bk * step(kKBlocks) * taps, false},
                    {"grad_input", with(pixels, {kCBlocks}), f4 * bc * rows * cols, true}};
      break;
    case ConvPassKind::upd:
      in.tensors = {{"input", with(pixels, {kCBlocks, kTapR, kTapS}), f4 * bc * rows * cols, false},
                    {"grad_output", with(pixels, {kKBlocks}), f4 * bk * rows * cols, false},
                    {"grad_filter", {kCBlocks, kKBlocks, kTapR, kTapS}, f4 * bc * bk, true}};
      break;
  }
  in.total_flops = flops();
  // The micro-kernel holds output rows (channels) in multiples of 8 floats; other heights waste lanes.
  in.body_efficiency = static_cast<long>(out_rows) % 8 == 0 ? 0.9 : 0.7;
  in.call_overhead_seconds = 30e-9;
  return in;
}

std::unique_ptr<tuner::Runner> ConvWorkload::prepare(const tuner::TunedConfig& config) const {
  const ConvShape& s = shape_;
  Data& data = *data_;
  PassBinding binding;
  std::function<void(std::vector<float>&)> reference;
  const std::int64_t out_count = s.N * s.K * s.ofh() * s.ofw();
  switch (pass_) {
    case ConvPassKind::fwd: {
      ConvFwdConfig fwd = to_conv_fwd_config(config, s);
      fwd.dtype = options_.dtype;
      auto b = std::make_shared<Bound<ConvFwd>>(fwd);
      const auto& p = b->pass;
      b->a = nchw_to_blocked(data.first.data(), p.input_layout());
      b->b = kcrs_to_blocked(data.second.data(), p.filter_layout());
      b->bias.assign(static_cast<std::size_t>(p.config().k_blocking().padded()), 0.0f);
      b->out.resize(static_cast<std::size_t>(p.output_layout().size()));
      if (p.config().bf16()) {
        b->a_bf16 = to_bf16(b->a);
        b->b_bf16 = filter_to_vnni2(b->b, p.filter_layout());
        b->bias_bf16 = to_bf16(b->bias);
        b->out_bf16.resize(b->out.size());
        binding = {[b] { b->pass.run(b->a_bf16.data(), b->b_bf16.data(), b->bias_bf16.data(), b->out_bf16.data()); },
                   [b](float* plain) {
                     b->out = to_floats(b->out_bf16.data(), static_cast<std::int64_t>(b->out_bf16.size()));
                     blocked_to_nchw(b->out.data(), plain, b->pass.output_layout());
                   },
                   b->poison(), p.tolerance()};
      } else {
        binding = {[b] { b->pass.run(b->a.data(), b->b.data(), b->bias.data(), b->out.data()); },
                   [b](float* plain) { blocked_to_nchw(b->out.data(), plain, b->pass.output_layout()); },
                   b->poison(), p.tolerance()};
      }
      reference = [&data, s, out_count](std::vector<float>& ref) {
        ref.resize(static_cast<std::size_t>(out_count));
        conv_fwd_reference(s, data.first.data(), data.second.data(), nullptr, false, ref.data());
      };
      break;
    }
    case ConvPassKind::bwd: {
      ConvBwdConfig bwd = to_conv_bwd_config(config, s);
      bwd.dtype = options_.dtype;
      auto b = std::make_shared<Bound<ConvBwd>>(bwd);
      const auto& p = b->pass;
      // Timed on the filter transposed once while preparing (run_transposed), as weft-bench-conv
      // and oneDNN (its reorder) run it: the transpose costs once per filter, not once per run.
      const auto filter = kcrs_to_blocked(data.second.data(), p.filter_layout());
      b->a.resize(static_cast<std::size_t>(p.transposed_filter_layout().size()));
      b->b = nchw_to_blocked(data.first.data(), p.grad_output_layout());
      b->out.resize(static_cast<std::size_t>(p.grad_input_layout().size()));
      if (p.config().bf16()) {
        b->a_bf16.resize(b->a.size());
        p.transpose_filter(filter_to_vnni2(filter, p.filter_layout()).data(), b->a_bf16.data());
        b->b_bf16 = to_bf16(b->b);
        b->out_bf16.resize(b->out.size());
        binding = {[b] { b->pass.run_transposed(b->a_bf16.data(), b->b_bf16.data(), b->out_bf16.data()); },
                   [b](float* plain) {
                     b->out = to_floats(b->out_bf16.data(), static_cast<std::int64_t>(b->out_bf16.size()));
                     blocked_to_nchw(b->out.data(), plain, b->pass.grad_input_layout());
                   },
                   b->poison(), p.tolerance()};
      } else {
        p.transpose_filter(filter.data(), b->a.data());
        binding = {[b] { b->pass.run_transposed(b->a.data(), b->b.data(), b->out.data()); },
                   [b](float* plain) { blocked_to_nchw(b->out.data(), plain, b->pass.grad_input_layout()); },
                   b->poison(), p.tolerance()};
      }
      reference = [&data, s](std::vector<float>& ref) {
        ref.resize(static_cast<std::size_t>(s.N * s.C * s.H * s.W));
        conv_bwd_data_reference(s, data.first.data(), data.second.data(), ref.data());
      };
      break;
    }
    case ConvPassKind::upd: {
      ConvUpdConfig upd = to_conv_upd_config(config, s);
      upd.dtype = options_.dtype;
      auto b = std::make_shared<Bound<ConvUpd>>(upd);
      const auto& p = b->pass;
      b->a = nchw_to_blocked(data.first.data(), p.input_layout());
      b->b = nchw_to_blocked(data.second.data(), p.grad_output_layout());
      b->out.resize(static_cast<std::size_t>(p.filter_layout().size()));
      if (p.config().bf16()) {
        b->a_bf16 = to_bf16(b->a);
        b->b_bf16 = to_bf16(b->b);
        b->out_bf16.resize(b->out.size());
        binding = {[b] { b->pass.run(b->a_bf16.data(), b->b_bf16.data(), b->out_bf16.data()); },
                   [b](float* plain) {
                     b->out = vnni2_to_filter(b->out_bf16.data(), b->pass.filter_layout());
                     blocked_to_kcrs(b->out.data(), plain, b->pass.filter_layout());
                   },
                   b->poison(), p.tolerance()};
      } else {
        binding = {[b] { b->pass.run(b->a.data(), b->b.data(), b->out.data()); },
                   [b](float* plain) { blocked_to_kcrs(b->out.data(), plain, b->pass.filter_layout()); },
                   b->poison(), p.tolerance()};
      }
      reference = [&data, s](std::vector<float>& ref) {
        ref.resize(static_cast<std::size_t>(s.K * s.C * s.R * s.S));
        conv_bwd_weights_reference(s, data.first.data(), data.second.data(), ref.data());
      };
      break;
    }
  }
  return std::make_unique<ConvRunner>(std::move(binding), data, std::move(reference));
}

}  // namespace weft::ops
