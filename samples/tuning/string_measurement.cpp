#include "string_measurement.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include <weft/jit/error.hpp>
#include <weft/tuner/svg_plot.hpp>

namespace weft::samples {
namespace {

std::string_view trim(std::string_view s) {
  const std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// Calls `use` with each line of `text` (without its newline) until it returns true.
template <class Use>
void for_each_line(std::string_view text, Use&& use) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (use(text.substr(start, end - start))) return;
    start = end + 1;
  }
}

// The first line of `text` that is not blank and, when `containing` is given, contains it.
std::string first_line(std::string_view text, std::string_view containing = {}) {
  std::string found;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (line.empty() || line.find(containing) == std::string_view::npos) return false;
    found = line;
    return true;
  });
  return found;
}

}  // namespace

std::vector<std::string> read_loop_strings(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error("cannot read the loop strings in " + file.string() + ": " + std::strerror(errno));
  std::vector<std::string> strings;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    const std::string s(trim(std::string_view(line).substr(0, line.find('#'))));
    if (!s.empty() && seen.insert(s).second) strings.push_back(s);
  }
  if (in.bad()) throw Error("cannot read the loop strings in " + file.string());
  return strings;
}

std::optional<Measure> parse_measure(std::string_view output) {
  std::optional<Measure> last;
  for_each_line(output, [&](std::string_view line) {
    if (line.rfind("MEASURE ", 0) != 0) return false;
    const std::string rest(trim(line.substr(8)));
    char* end = nullptr;
    const double gflops = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str() || !std::isfinite(gflops) || gflops < 0) return false;
    last = Measure{gflops, std::string(trim(end))};
    return false;
  });
  return last;
}

std::vector<std::string> substitute(const std::vector<std::string>& command, const std::string& placeholder,
                                    const std::string& value) {
  std::vector<std::string> out = command;
  for (std::string& arg : out)
    for (std::size_t at = arg.find(placeholder); at != std::string::npos; at = arg.find(placeholder, at + value.size()))
      arg.replace(at, placeholder.size(), value);
  return out;
}

std::optional<std::string> run_failure(const ProcessResult& run) {
  if (run.succeeded()) {
    if (parse_measure(run.out)) return std::nullopt;
    const std::string said = first_line(run.err);
    return "no MEASURE line in its output" + (said.empty() ? "" : ": " + said);
  }
  std::string said = first_line(run.err);
  if (said.empty()) said = first_line(run.out, "FAILED");  // a failed check says so on stdout
  return run.status_text() + (said.empty() ? "" : ": " + said);
}

double StringMeasurement::median() const {
  if (gflops.empty()) return 0;
  std::vector<double> sorted = gflops;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

std::vector<StringMeasurement> measure_loop_strings(const std::vector<std::string>& strings,
                                                    const std::vector<std::string>& command,
                                                    const StringRunOptions& options, const StringProgress& progress) {
  std::vector<StringMeasurement> results(strings.size());
  for (std::size_t i = 0; i < strings.size(); ++i) results[i].loop_string = strings[i];
  const std::size_t total = strings.size() * options.repeat;
  std::size_t done = 0;
  for (std::size_t round = 0; round < options.repeat; ++round) {
    for (StringMeasurement& r : results) {
      ++done;
      if (r.failed) continue;  // not run again
      const ProcessResult run =
          run_process(substitute(command, options.placeholder, r.loop_string), options.timeout_seconds);
      if (const auto failure = run_failure(run)) {
        r.failed = true;
        r.error = *failure;
      } else {
        const Measure m = *parse_measure(run.out);
        r.gflops.push_back(m.gflops);
        r.tag = m.tag;
      }
      if (progress) progress(r, done, total);
    }
  }
  return results;
}

void print_ranking(std::FILE* out, const std::vector<StringMeasurement>& results, std::size_t rows) {
  std::vector<const StringMeasurement*> ranked, failed;
  for (const auto& r : results) (r.failed ? failed : ranked).push_back(&r);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const StringMeasurement* a, const StringMeasurement* b) { return a->median() > b->median(); });
  const StringMeasurement* first = results.empty() || results[0].failed ? nullptr : &results[0];
  const double best = ranked.empty() ? 0 : ranked[0]->median();
  const bool spread = !ranked.empty() && ranked[0]->gflops.size() > 1;
  std::fprintf(out, "%4s %9s %8s %9s%s  %s\n", "rank", "GFLOPS", "vs best", "vs first", spread ? "   spread" : "",
               "loop string");
  const std::size_t shown = rows == 0 ? ranked.size() : std::min(rows, ranked.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const StringMeasurement& r = *ranked[i];
    const double g = r.median();
    char vs_first[16] = "        -";
    if (first != nullptr && first->median() > 0) std::snprintf(vs_first, sizeof vs_first, "%8.3fx", g / first->median());
    char range[16] = "";
    if (spread) {
      const auto [lo, hi] = std::minmax_element(r.gflops.begin(), r.gflops.end());
      std::snprintf(range, sizeof range, " %7.1f%%", g > 0 ? (*hi - *lo) / g * 100 : 0.0);
    }
    std::fprintf(out, "%4zu %9.2f %7.3fx %s%s  %s%s\n", i + 1, g, best > 0 ? g / best : 0.0, vs_first, range,
                 r.loop_string.c_str(), &r == first ? "  (first)" : "");
  }
  if (shown < ranked.size()) std::fprintf(out, "     (%zu more)\n", ranked.size() - shown);
  if (!failed.empty()) {
    std::fprintf(out, "failed: %zu of %zu\n", failed.size(), results.size());
    for (const StringMeasurement* r : failed)
      std::fprintf(out, "   %s  %s%s\n", r->loop_string.c_str(), r->error.c_str(), r == &results[0] ? "  (first)" : "");
  }
}

void write_ranking_plot(const std::vector<StringMeasurement>& results, const std::filesystem::path& path,
                        const std::string& title) {
  std::vector<double> measured;
  for (const auto& r : results)
    if (!r.failed) measured.push_back(r.median());
  std::sort(measured.rbegin(), measured.rend());
  std::vector<double> rank(measured.size());
  for (std::size_t i = 0; i < rank.size(); ++i) rank[i] = static_cast<double>(i + 1);
  tuner::SvgPlot plot(title, "rank", "GFLOPS");
  plot.add_points("loop strings, best first", rank, measured, "#4477aa");
  if (!results.empty() && !results[0].failed)
    plot.add_hline("first string: " + results[0].loop_string, results[0].median(), "#228833");
  plot.write(path);
}

}  // namespace weft::samples
