// Per-rank, per-iteration phase samples, the raw material of every trace (table "samples"), and
// the other tables every trace carries: "phases" (names of the phase ids) and "ranks" (the rank
// -> host -> core map).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/measure/table.hpp"
#include "core/measure/timer.hpp"

namespace sp {

class SampleLog {
 public:
  // phases: names in id order, e.g. {"allreduce"} or {"data","forward","backward",...}.
  explicit SampleLog(std::vector<std::pair<std::string, std::string>> phases_with_descriptions);
  int phase_id(const std::string& name) const;  // throws if unknown
  void reserve(std::size_t n);
  // bucket = -1 when the phase is not a bucket's allreduce.
  void add(std::int64_t case_id, std::int64_t iteration, int phase, std::int64_t bucket, const PhaseSample& s);
  std::size_t size() const { return case_.size(); }
  Table samples_table() const;  // per_rank scope
  Table phases_table() const;   // shared scope

 private:
  std::vector<std::pair<std::string, std::string>> phases_;
  std::vector<std::int64_t> case_, iteration_, phase_, bucket_;
  std::vector<double> start_, wall_, cpu_;
};

// This rank's row of the "ranks" table: host, pid, core it started on, allowed cores, threads.
Table rank_map_row();

}  // namespace sp
