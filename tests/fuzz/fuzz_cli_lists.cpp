// Fuzz target: the size and list parsers behind the command-line flags (core/sizes, core/options,
// collectives' dtype/op/algorithm/bucket-cap names, trainers/dp's plan with --inject-fault, and
// resnet_train's --lr-steps).
//
// Input: "<parser>\n<text>" where <parser> is one of the names in kParsers (seeds are readable);
// any other first line picks a parser by its first byte. Beyond "sp::Error or success", each
// parser's result is checked against what its header promises.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/buckets.hpp"
#include "core/run/error.hpp"
#include "core/run/options.hpp"
#include "core/run/sizes.hpp"
#include "fuzz_util.hpp"
#include "trainers/dp/options.hpp"
#include "trainers/resnet/train_options.hpp"

namespace {

using sp::fuzz::finding;

std::vector<std::string> lines_of(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (std::size_t i = 0; i + 1 < n && pos <= text.size(); ++i) {
    std::size_t nl = std::min(text.find('\n', pos), text.size());
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  out.push_back(pos <= text.size() ? text.substr(pos) : "");
  out.resize(n);  // missing lines are empty
  return out;
}

// A small integer from a text line (the fuzzer mutates digits too); fallback when malformed.
long small_int(const std::string& s, long lo, long hi, long fallback) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str()) return fallback;
  return std::clamp(v, lo, hi);
}

void check_size_range(const std::vector<std::uint64_t>& sizes, std::uint64_t lo, std::uint64_t hi) {
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < lo || sizes[i] > hi) finding(fmt::format("size_range: {} outside [{}, {}]", sizes[i], lo, hi));
    if (i && sizes[i] <= sizes[i - 1]) finding("size_range: sizes not strictly increasing");
  }
}

void size(const std::string& t) {
  const std::uint64_t v = sp::parse_size(t);
  // Any accepted size up to 2^64 - 1 is exact: its plain decimal form parses back to itself.
  if (sp::parse_size(std::to_string(v)) != v) finding(fmt::format("parse_size('{}') = {} does not round-trip", t, v));
}

void size_list(const std::string& t) {
  sp::SizeOptions o;
  o.list = t;
  const auto a = o.resolve(), b = sp::parse_size_list(t);
  if (a != b || a.empty()) finding("size list: resolve() and parse_size_list disagree or are empty");
}

void size_range(const std::string& t) {  // "min\nmax\nfactor", as -b / -e / -f
  const auto l = lines_of(t, 3);
  sp::SizeOptions o;
  o.min = l[0];
  o.max = l[1];
  o.factor = std::strtod(l[2].c_str(), nullptr);
  const auto sizes = o.resolve();
  check_size_range(sizes, sp::parse_size(o.min), sp::parse_size(o.max));
}

void choice_list(const std::string& t) {
  std::vector<std::string> algos;
  for (const auto& a : sp::coll::algorithms()) algos.emplace_back(a.name);
  try {
    for (const std::string& a : sp::parse_choice_list(t, algos, "algorithm")) sp::coll::find_algorithm(a);
  } catch (const sp::Error& e) {
    sp::fuzz::refused(e);
  }
  for (const std::string& d : sp::parse_choice_list(t, {"f32", "f64", "i32", "bf16"}, "dtype"))
    if (sp::coll::size_of(sp::coll::parse_dtype(d)) == 0) finding("dtype of size 0");
}

void names(const std::string& t) {
  try {
    sp::coll::parse_dtype(t);
  } catch (const sp::Error& e) {
    sp::fuzz::refused(e);
  }
  try {
    sp::coll::parse_op(t);
  } catch (const sp::Error& e) {
    sp::fuzz::refused(e);
  }
  sp::coll::find_algorithm(t);
}

void bucket_caps(const std::string& t) {
  for (const std::string& c : sp::split_list(t, "bucket cap list")) {
    const sp::coll::BucketCap cap = sp::coll::parse_bucket_cap(c);
    if (cap.label != "tensor" && (cap.cap_bytes == 0 || cap.first_bytes == 0))
      finding(fmt::format("bucket cap '{}' resolves to 0 bytes", c));
    // A cap must pack a layout into buckets that tile it.
    sp::coll::GradientLayout l = sp::coll::layout_preset("resnet50");
    std::size_t next = 0;
    for (const auto& b : sp::coll::pack_buckets(l, 4, cap)) {
      if (b.offset != next || b.numel == 0) finding("pack_buckets: buckets do not tile the buffer");
      next += b.numel;
    }
    if (next != l.total_numel()) finding("pack_buckets: buckets do not cover the buffer");
  }
}

void plan(const std::string& t) {  // algorithms, caps, fault, batch, ranks, accum, global batch, local sgd
  const auto l = lines_of(t, 8);
  sp::dp::DataParallelOptions o;
  o.algorithms = l[0];
  o.bucket_caps = l[1];
  o.inject_fault = l[2];
  const int batch = int(small_int(l[3], 1, 4096, 8)), nranks = int(small_int(l[4], 1, 256, 2));
  o.accum_steps = int(small_int(l[5], 1, 64, 1));
  o.global_batch = int(small_int(l[6], 0, 1 << 16, 0));
  o.local_sgd = int(small_int(l[7], 0, 16, 0));
  const sp::dp::DataParallelPlan p = sp::dp::make_plan(o, batch, nranks);
  if (p.micro_batch < 1) finding(fmt::format("make_plan: micro batch {}", p.micro_batch));
  if (p.global_batch != p.micro_batch * p.accum_steps * nranks) finding("make_plan: global batch mismatch");
  if (p.cases.empty()) finding("make_plan: no reduction case");
  if (p.fault.kind != sp::dp::Fault::Kind::none && (p.fault.rank < 0 || p.fault.rank >= nranks || p.fault.step < 1))
    finding("make_plan: fault outside the run");
}

void lr_steps(const std::string& t) {  // steps, then the --lr-steps list
  const auto l = lines_of(t, 2);
  sp::resnet::TrainOptions o;
  o.steps = int(small_int(l[0], 1, 1 << 20, 100));
  o.schedule = "step";
  o.lr_steps = l[1];
  sp::resnet::resolve_schedule(o);
  // The default (50% and 75% of --steps) may repeat a step when --steps < 4; a given list may not.
  if (o.lr_steps.empty()) return;
  for (std::size_t i = 0; i < o.milestones.size(); ++i)
    if (o.milestones[i] < 1 || (i && o.milestones[i] <= o.milestones[i - 1])) finding("lr milestones not increasing");
}

struct Parser {
  const char* name;
  void (*run)(const std::string&);
};
constexpr Parser kParsers[] = {{"size", size},
                               {"size_list", size_list},
                               {"size_range", size_range},
                               {"choice_list", choice_list},
                               {"names", names},
                               {"bucket_caps", bucket_caps},
                               {"plan", plan},
                               {"lr_steps", lr_steps}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string in(sp::fuzz::as_text(data, size));
  const std::size_t nl = in.find('\n');
  const std::string head = in.substr(0, nl), text = nl == std::string::npos ? "" : in.substr(nl + 1);
  const Parser* parser = &kParsers[data[0] % std::size(kParsers)];
  for (const Parser& p : kParsers)
    if (head == p.name) parser = &p;
  try {
    parser->run(text);
  } catch (const sp::Error& e) {
    sp::fuzz::refused(e);  // the one-line error every flag parser owes the user
  }
  return 0;
}
