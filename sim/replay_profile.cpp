#include "sim/replay_profile.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

#include "core/run/error.hpp"
#include "core/trace/trace.hpp"

namespace sp::sim {

namespace {

std::int64_t int_attribute(const TraceReader& r, const std::string& name, std::int64_t fallback) {
  const std::string text = r.root_attribute(name);
  if (text.empty()) return fallback;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    fail("attribute '{}' is '{}', not an integer", name, text);
  }
}

// A row's (rank, step): the key the iterations, samples and buckets tables share.
using RankStep = std::pair<std::int64_t, std::int64_t>;

// Each row's (rank, step) of a table of the trace: its rank column and its step's (step_column).
std::vector<RankStep> rank_steps(const Table& t, const std::string& table, const std::string& step_column) {
  const auto& rank = column_values<std::int64_t>(t, table, "rank");
  const auto& step = column_values<std::int64_t>(t, table, step_column);
  std::vector<RankStep> keys;
  for (std::size_t i = 0; i < rank.size(); ++i) keys.emplace_back(rank[i], step[i]);
  return keys;
}

}  // namespace

double ReplayProfile::measured_step_s(std::size_t k) const {
  double slowest = 0;
  for (const auto& rank : by_rank) slowest = std::max(slowest, rank[k].measured_step_s);
  return slowest;
}

double ReplayProfile::measured_wait_s(std::size_t k) const {
  double longest = 0;
  for (const auto& rank : by_rank) longest = std::max(longest, rank[k].measured_wait_s);
  return longest;
}

ReplayProfile read_replay_profile(const std::filesystem::path& path) {
  const TraceReader r(path);
  const std::string file = path.string();
  try {
    if (r.kind() != "train") fail("a trace of kind '{}', not a trainer's (kind train)", r.kind());
    if (int_attribute(r, "no_comm", 0) != 0) fail("a --no-comm run: it has no gradient allreduce to replay");
    if (int_attribute(r, "local_sgd", 0) != 0) fail("a local-SGD run: the replay takes synchronous data parallelism");
    if (const std::string shard = r.root_attribute("shard"); !shard.empty() && shard != "none")
      fail("a --shard {} run: the replay takes unsharded data parallelism", shard);
    ReplayProfile p;
    p.source = file;
    p.ranks = int(r.nranks());
    p.overlap_mode = r.root_attribute("overlap_mode");
    if (p.overlap_mode.empty()) p.overlap_mode = int_attribute(r, "overlap", 1) ? "thread" : "none";
    if (p.overlap_mode != "progress" && p.overlap_mode != "thread" && p.overlap_mode != "none")
      fail("overlap_mode '{}' is not progress, thread or none", p.overlap_mode);
    p.chunk_bytes = double(int_attribute(r, "chunk_bytes", 1 << 20));
    p.machine = r.provenance("cpu_model");

    const Table cases = r.read_table("cases");
    const auto& algorithm = column_values<std::string>(cases, "cases", "algorithm");
    const auto& cap = column_values<std::string>(cases, "cases", "bucket_cap");
    for (std::size_t i = 0; i < algorithm.size(); ++i) p.cases.push_back({algorithm[i], cap[i]});

    // The summarised steps of every rank, in step order.
    const Table it = r.read_table("iterations");
    const std::vector<RankStep> it_key = rank_steps(it, "iterations", "step");
    const auto& it_case = column_values<std::int64_t>(it, "iterations", "case");
    const auto& it_start = column_values<double>(it, "iterations", "step_start_s");
    const auto& it_progress = column_values<double>(it, "iterations", "progress_s");
    const auto& it_optimizer = column_values<double>(it, "iterations", "optimizer_s");
    const auto& it_step_s = column_values<double>(it, "iterations", "step_s");
    const auto& it_wait = column_values<double>(it, "iterations", "wait_s");
    const auto& it_summary = column_values<std::int64_t>(it, "iterations", "in_summary");
    std::map<RankStep, ReplayStep> steps;
    // Per step, on the rank's clock: the step's start and the progress calls inside backward;
    // then the last backward's start and the share of its wall time that was compute.
    struct Clock {
      double step_start = 0, progress = 0, backward_start = 0, compute_share = 1;
    };
    std::map<RankStep, Clock> clock;
    for (std::size_t i = 0; i < it_key.size(); ++i) {
      if (!it_summary[i]) continue;
      if (it_case[i] < 0 || std::size_t(it_case[i]) >= p.cases.size())
        fail("iterations row {} names case {}, of {}", i, it_case[i], p.cases.size());
      ReplayStep& s = steps[it_key[i]];
      s.step = double(it_key[i].second);
      s.case_id = double(it_case[i]);
      s.tail_s = it_optimizer[i];
      s.measured_step_s = it_step_s[i];
      s.measured_wait_s = it_wait[i];
      clock[it_key[i]] = {it_start[i], it_progress[i]};
    }
    if (steps.empty()) fail("no summarised step (in_summary = 1) to replay");

    // The last micro-batch's backward of each step: its start and its compute time. Phase ids
    // are rows of the phases table.
    const Table phases = r.read_table("phases");
    const auto& phase_names = column_values<std::string>(phases, "phases", "name");
    const auto backward_row = std::find(phase_names.begin(), phase_names.end(), "backward");
    if (backward_row == phase_names.end()) fail("the phases table has no 'backward'");
    const auto backward_phase = std::int64_t(backward_row - phase_names.begin());
    const Table samples = r.read_table("samples");
    const std::vector<RankStep> sa_key = rank_steps(samples, "samples", "iteration");
    const auto& sa_phase = column_values<std::int64_t>(samples, "samples", "phase");
    const auto& sa_start = column_values<double>(samples, "samples", "start_s");
    const auto& sa_wall = column_values<double>(samples, "samples", "wall_s");
    std::map<RankStep, std::pair<double, double>> backward;  // the last one's start, wall time
    for (std::size_t i = 0; i < sa_key.size(); ++i) {
      if (sa_phase[i] != backward_phase) continue;
      auto [at, fresh] = backward.try_emplace(sa_key[i], sa_start[i], sa_wall[i]);
      if (!fresh && sa_start[i] > at->second.first) at->second = {sa_start[i], sa_wall[i]};
    }
    for (auto& [key, s] : steps) {
      const auto b = backward.find(key);
      if (b == backward.end()) fail("rank {} step {} has no backward sample", key.first, key.second);
      Clock& c = clock[key];
      s.lead_s = std::max(0.0, b->second.first - c.step_start);
      s.backward_s = b->second.second;
      // Progress mode: the buckets' ready times count the calls that advanced them inside
      // backward; spread over backward, they are taken out in proportion.
      c.backward_start = b->second.first;
      c.compute_share = s.backward_s / std::max(1e-12, s.backward_s + c.progress);
      s.progress_s = c.progress;
    }

    const Table bk = r.read_table("buckets");
    const std::vector<RankStep> bk_key = rank_steps(bk, "buckets", "step");
    const auto& bk_numel = column_values<std::int64_t>(bk, "buckets", "numel");
    const auto& bk_tensors = column_values<std::int64_t>(bk, "buckets", "tensors");
    const auto& bk_ready = column_values<double>(bk, "buckets", "ready_s");
    for (std::size_t i = 0; i < bk_key.size(); ++i) {
      const auto s = steps.find(bk_key[i]);
      if (s == steps.end()) continue;  // not a summarised step
      if (bk_numel[i] <= 0 || bk_numel[i] > (std::int64_t(1) << 40))
        fail("buckets row {} has {} elements", i, bk_numel[i]);
      const Clock& c = clock[bk_key[i]];
      const double ready = std::clamp((bk_ready[i] - c.backward_start) * c.compute_share, 0.0, s->second.backward_s);
      s->second.buckets.push_back({double(bk_numel[i]), double(std::max<std::int64_t>(1, bk_tensors[i])), ready});
    }

    p.by_rank.resize(std::size_t(p.ranks));
    for (auto& [key, s] : steps) {
      if (key.first < 0 || key.first >= p.ranks)
        fail("iterations row of rank {} in a trace of {} ranks", key.first, p.ranks);
      if (s.buckets.empty()) fail("rank {} step {} has no bucket", key.first, key.second);
      std::stable_sort(s.buckets.begin(), s.buckets.end(),
                       [](const ReplayBucket& a, const ReplayBucket& b) { return a.ready_s < b.ready_s; });
      p.by_rank[std::size_t(key.first)].push_back(std::move(s));
    }
    for (std::size_t rank = 0; rank < p.by_rank.size(); ++rank) {
      const auto& mine = p.by_rank[rank];
      const auto& first = p.by_rank.front();
      if (mine.size() != first.size())
        fail("rank {} has {} summarised steps, rank 0 {}", rank, mine.size(), first.size());
      for (std::size_t k = 0; k < mine.size(); ++k)
        if (mine[k].step != first[k].step || mine[k].buckets.size() != first[k].buckets.size())
          fail("rank {} step {} differs from rank 0's in its step or buckets", rank, mine[k].step);
    }
    return p;
  } catch (const Error& e) {
    // The reader's own errors name the file already (TraceReader::read_table does the same).
    if (std::string_view(e.what()).starts_with(file + ": ")) throw;
    fail("{}: {}", file, e.what());
  }
}

// Numbers: ranks, chunk_bytes, cases, steps; then per rank and step the step's fields, its bucket
// count and per bucket numel, tensors, ready_s. Text: source, mode, machine, then per case its
// algorithm and cap, each ending in '\n'.
std::vector<double> flatten(const ReplayProfile& p, std::string& text) {
  text = p.source + '\n' + p.overlap_mode + '\n' + p.machine + '\n';
  for (const ReplayCase& c : p.cases) text += c.algorithm + '\n' + c.bucket_cap + '\n';
  std::vector<double> v{double(p.ranks), p.chunk_bytes, double(p.cases.size()), double(p.steps())};
  for (const auto& rank : p.by_rank)
    for (const ReplayStep& s : rank) {
      v.insert(v.end(), {s.step, s.case_id, s.lead_s, s.backward_s, s.progress_s, s.tail_s, s.measured_step_s,
                         s.measured_wait_s, double(s.buckets.size())});
      for (const ReplayBucket& b : s.buckets) v.insert(v.end(), {b.numel, b.tensors, b.ready_s});
    }
  return v;
}

ReplayProfile unflatten(const std::vector<double>& v, const std::string& text) {
  std::size_t at = 0, line = 0;
  auto next_line = [&] {
    const std::size_t end = text.find('\n', line);
    if (end == std::string::npos) fail("replay profile: its text is cut short");
    std::string s = text.substr(line, end - line);
    line = end + 1;
    return s;
  };
  auto next = [&] {
    if (at >= v.size()) fail("replay profile: its numbers are cut short");
    return v[at++];
  };
  ReplayProfile p;
  p.source = next_line();
  p.overlap_mode = next_line();
  p.machine = next_line();
  p.ranks = int(next());
  p.chunk_bytes = next();
  const auto cases = std::size_t(next()), steps = std::size_t(next());
  for (std::size_t c = 0; c < cases; ++c) {
    std::string algorithm = next_line();
    p.cases.push_back({algorithm, next_line()});
  }
  p.by_rank.resize(std::size_t(p.ranks));
  for (auto& rank : p.by_rank)
    for (std::size_t k = 0; k < steps; ++k) {
      ReplayStep s;
      s.step = next(), s.case_id = next(), s.lead_s = next(), s.backward_s = next(), s.progress_s = next();
      s.tail_s = next();
      s.measured_step_s = next();
      s.measured_wait_s = next();
      const auto buckets = std::size_t(next());
      for (std::size_t b = 0; b < buckets; ++b) {
        ReplayBucket x;
        x.numel = next(), x.tensors = next(), x.ready_s = next();
        s.buckets.push_back(x);
      }
      rank.push_back(std::move(s));
    }
  return p;
}

}  // namespace sp::sim
