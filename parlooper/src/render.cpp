// C-like pseudo code of a nest, with its parallel annotations: what weft-explain prints.
#include "weft/parlooper/render.hpp"

#include <string>
#include <vector>

namespace weft::parlooper {
namespace {

bool is_grid(ParKind p) { return p == ParKind::rows || p == ParKind::cols || p == ParKind::layers; }

const char* grid_dim(ParKind p) {
  return p == ParKind::rows ? "rows" : p == ParKind::cols ? "cols" : "layers";
}
const char* grid_coordinate(ParKind p) {
  return p == ParKind::rows ? "row" : p == ParKind::cols ? "col" : "layer";
}

class Renderer {
 public:
  Renderer(const LoopNest& nest, const NestBounds* bounds)
      : nest_(nest), bounds_(bounds), parent_(nest.levels.size(), -1), has_child_(nest.levels.size(), false) {
    std::vector<int> latest(kMaxLoops, -1);
    for (std::size_t l = 0; l < nest.levels.size(); ++l) {
      int& last = latest[static_cast<std::size_t>(nest.levels[l].loop)];
      parent_[l] = last;
      if (last >= 0) has_child_[static_cast<std::size_t>(last)] = true;
      last = static_cast<int>(l);
    }
  }

  std::string render() {
    out_ += "// loop_string \"" + nest_.canonical + "\": " + std::to_string(nest_.num_loops) + " loop" +
            (nest_.num_loops == 1 ? "" : "s") + ", " + std::to_string(nest_.levels.size()) + " levels\n";
    if (nest_.has_grid()) {
      out_ += "#pragma omp parallel  // thread grid " + std::to_string(nest_.grid_rows) + " x " +
              std::to_string(nest_.grid_cols) + " x " + std::to_string(nest_.grid_layers) +
              " (rows x cols x layers); threads " + std::to_string(nest_.grid_threads()) +
              " and up take no part\n";
    } else {
      out_ += "#pragma omp parallel\n";
    }
    out_ += "{\n";
    emit(0, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  std::string var(int l) const {
    const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
    return std::string(1, static_cast<char>('a' + lv.loop)) + std::to_string(lv.occurrence);
  }
  std::string letter(int loop) const { return std::string(1, static_cast<char>('a' + loop)); }

  std::string step(int l) const {
    const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
    if (bounds_ != nullptr) return std::to_string(bounds_->level_step[l]);
    if (lv.occurrence + 1 < lv.num_occurrences)
      return letter(lv.loop) + ".block[" + std::to_string(lv.occurrence) + "]";
    return letter(lv.loop) + ".step";
  }

  // The expression of the bound level l's inner occurrences clamp to ("end" of its loop).
  std::string end_of(int l) const {
    const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
    const int p = parent_[static_cast<std::size_t>(l)];
    if (p < 0) return bounds_ != nullptr ? std::to_string(bounds_->loop_end[lv.loop]) : letter(lv.loop) + ".end";
    const std::string parent_end = parent_[static_cast<std::size_t>(p)] < 0 ? end_of(p) : var(p) + "_end";
    return "min(" + var(p) + " + " + step(p) + ", " + parent_end + ")";
  }

  std::string start_of(int l) const {
    const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
    const int p = parent_[static_cast<std::size_t>(l)];
    if (p >= 0) return var(p);
    return bounds_ != nullptr ? std::to_string(bounds_->loop_start[lv.loop]) : letter(lv.loop) + ".start";
  }

  void line(int depth, const std::string& text) { out_ += std::string(2 * static_cast<std::size_t>(depth), ' ') + text + "\n"; }

  void annotate(int l, int depth) {
    const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
    if (nest_.has_run() && l == nest_.run_begin) {
      std::string pragma = "#pragma omp for";
      if (nest_.run_length > 1) pragma += " collapse(" + std::to_string(nest_.run_length) + ")";
      if (nest_.schedule.kind != ScheduleKind::static_ || nest_.schedule.chunk > 0) {
        pragma += nest_.schedule.kind == ScheduleKind::static_    ? " schedule(static"
                  : nest_.schedule.kind == ScheduleKind::dynamic ? " schedule(dynamic"
                  : nest_.schedule.kind == ScheduleKind::guided  ? " schedule(guided"
                  : nest_.schedule.kind == ScheduleKind::runtime ? " schedule(runtime"
                                                                  : " schedule(auto";
        if (nest_.schedule.chunk > 0) (pragma += ',') += std::to_string(nest_.schedule.chunk);
        pragma += ")";
      }
      pragma += " nowait";
      if (nest_.schedule.kind != ScheduleKind::static_)
        pragma += "  // no fixed owner per iteration: it may change from one entry to the next";
      line(depth, pragma);
      for (int k = l + 1; k < nest_.run_begin + nest_.run_length; ++k) {
        const int p = parent_[static_cast<std::size_t>(k)];
        if (p >= nest_.run_begin)
          line(depth, "// " + var(k) + " is clamped to the block of " + var(p) +
                          " inside the collapsed space, which counts only the values that exist");
      }
    } else if (is_grid(lv.par)) {
      line(depth, "// split " + std::to_string(lv.ways) + " ways over thread " + grid_dim(lv.par) + ": block " +
                      grid_coordinate(lv.par) + " of the iterations, the first (iterations % " +
                      std::to_string(lv.ways) + ") blocks one longer");
    }
  }

  void emit(int l, int depth) {
    if (l == static_cast<int>(nest_.levels.size())) {
      std::string call = "body(";
      for (int x = 0; x < nest_.num_loops; ++x) {
        int innermost = -1;
        for (int k = 0; k < static_cast<int>(nest_.levels.size()); ++k)
          if (nest_.levels[static_cast<std::size_t>(k)].loop == x) innermost = k;
        call += (x > 0 ? ", " : "") + var(innermost);
      }
      line(depth, call + ");");
      return;
    }
    const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
    annotate(l, depth);
    const std::string v = var(l);
    std::string header = "for (int " + v + " = " + start_of(l);
    // Name the bound when a deeper occurrence clamps to it, to keep those headers short.
    if (has_child_[static_cast<std::size_t>(l)] && parent_[static_cast<std::size_t>(l)] >= 0) {
      header += ", " + v + "_end = " + end_of(l) + "; " + v + " < " + v + "_end";
    } else {
      header += "; " + v + " < " + end_of(l);
    }
    header += "; " + v + " += " + step(l) + ") {";
    line(depth, header);
    emit(l + 1, depth + 1);
    line(depth, "}");
    if (lv.barrier_after) line(depth, "team_barrier();  // every thread that takes part");
  }

  const LoopNest& nest_;
  const NestBounds* bounds_;
  std::vector<int> parent_;
  std::vector<bool> has_child_;
  std::string out_;
};

}  // namespace

std::string render(const LoopNest& nest) { return Renderer(nest, nullptr).render(); }
std::string render(const LoopNest& nest, const NestBounds& bounds) { return Renderer(nest, &bounds).render(); }

}  // namespace weft::parlooper
