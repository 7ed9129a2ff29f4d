#include "trainers/dp/options.hpp"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "collectives/algorithms/backend.hpp"
#include "core/run/options.hpp"
#include "core/run/program.hpp"

namespace sp::dp {

void add_data_parallel_options(CLI::App& app, DataParallelOptions& o) {
  std::string algos;
  for (const auto& a : coll::algorithms()) algos += (algos.empty() ? "" : ", ") + std::string(a.name);
  app.add_option(
         "-a,--algorithm", o.algorithms,
         fmt::format("gradient allreduce algorithm(s), comma-separated or all; several are cycled step by step ({})",
                     algos))
      ->capture_default_str();
  // Host-memory transports only: the trainers' gradients are on the host (no GPU trainer yet).
  app.add_option("--backend", o.backend, "communication library the gradient buckets (and --local-sgd averaging) use")
      ->check(CLI::IsMember(coll::transport_names(/*host_only=*/true)))
      ->capture_default_str();
  app.add_option(
         "--bucket-cap-mb", o.bucket_caps,
         "bucket cap(s) in MiB (first bucket 1 MiB, as DDP), 'tensor' or 'all'; several are cycled step by step")
      ->capture_default_str();
  app.add_option("--chunk-kib", o.chunk_kib, "pipelining segment of ring and tree (0 = none)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--overlap", o.overlap,
                 "how the bucket allreduces overlap backward: progress (advanced from the compute thread between "
                 "layers), thread (a communication thread, on a spare core where MPI needs one), none (after "
                 "backward), auto (thread with a spare core, else progress)")
      ->check(CLI::IsMember({"auto", "progress", "thread", "none"}))
      ->capture_default_str();
  app.add_flag("--no-overlap", o.no_overlap, "the same as --overlap none (the no-overlap baseline)");
  app.add_option(
         "--comm-core", o.comm_core,
         "the CPU of the communication thread (--overlap thread): one of this rank's, in no other local rank's binding")
      ->check(CLI::Range(0, 1 << 16));
  app.add_flag("--no-stream-buckets", o.no_stream_buckets,
               "gradients in the node segment, progress or thread mode: shm-seg's buckets start only once backward has "
               "finished them, as every other algorithm's (by default they stream: each chunk is reduced as soon "
               "as every rank has finished it)");
  app.add_flag("--no-comm", o.no_comm,
               "no gradient communication: every rank trains alone on its own batches (the same-load baseline of a "
               "data-parallel run; the ranks' models diverge)");
  app.add_option("--scaling", o.scaling,
                 "strong: --batch is the global batch, split across the ranks; weak: --batch rows per rank "
                 "(default: weak, or strong with --global-batch)")
      ->check(CLI::IsMember({"strong", "weak"}));
  // Every trainer declares -B,--batch before these options; this one replaces it.
  app.get_option("--batch")->excludes(
      app.add_option("--global-batch", o.global_batch,
                     "strong scaling: rows per optimizer step over all ranks, split evenly (replaces --batch)")
          ->check(CLI::Range(1, 1 << 24)));
  // The step counts, in --help's order; the default is shown where it is not 0 (off).
  struct Count {
    const char* flag;
    int DataParallelOptions::*value;
    const char* help;
    int min, max;
  };
  static constexpr Count kCounts[] = {
      {"--accum-steps", &DataParallelOptions::accum_steps,
       "micro-batches per optimizer step; gradients are synchronised only after the last (DDP no_sync)", 1, 1 << 16},
      {"--local-sgd", &DataParallelOptions::local_sgd,
       "local SGD: no gradient allreduce; ranks step independently and average parameters every N steps (0, "
       "the default: off)",
       0, 1 << 24},
      {"--verify-steps", &DataParallelOptions::verify_steps,
       "check the reduced gradients (or averaged parameters) of the first N synchronising steps against "
       "MPI_Allreduce",
       0, 1 << 24},
      {"--check-sync-every", &DataParallelOptions::check_sync_every,
       "compare a hash of the parameters across ranks every N steps (0, the default: after the last step only)", 0,
       1 << 24},
  };
  for (const Count& c : kCounts) {
    CLI::Option* opt = app.add_option(c.flag, o.*c.value, c.help)->check(CLI::Range(c.min, c.max));
    if (o.*c.value != 0) opt->capture_default_str();
  }
  app.add_option(
      "--inject-fault", o.inject_fault,
      "testing: KIND:RANK:STEP with KIND exit (process dies), error (rank fails), corrupt "
      "(wrong gradient after the allreduce) or slow (the rank is busy 0.3 s inside its backward: a straggler)");
  app.add_option("--shard", o.shard,
                 "sharded data parallelism: optimizer (ZeRO-1): gradient buckets reduce-scattered (ring), each "
                 "rank's optimizer state and update for its blocks only, parameters all-gathered after the update; "
                 "gradients (ZeRO-2): also the gradient memory of other ranks' blocks released once reduced")
      ->check(CLI::IsMember({"none", "optimizer", "gradients"}))
      ->capture_default_str();
  app.add_option("--shard-gather", o.shard_gather,
                 "--shard: the parameters' all-gather overlapped with the next step's forward (next-forward: each "
                 "bucket completed when a layer needs it, where nothing reads the parameters in between and the "
                 "overlap mode is not none) or completed right after the update (after-update)")
      ->check(CLI::IsMember({"next-forward", "after-update"}))
      ->capture_default_str();
}

namespace {

Fault parse_fault(const std::string& text) {
  Fault f;
  if (text.empty()) return f;
  std::vector<std::string> parts;
  for (std::size_t pos = 0;;) {
    const std::size_t colon = text.find(':', pos);
    parts.push_back(text.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos));
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  auto bad = [&] {
    return UsageError(fmt::format("--inject-fault '{}': expected KIND:RANK:STEP, KIND exit|error|corrupt|slow", text));
  };
  if (parts.size() != 3) throw bad();
  if (parts[0] == "exit")
    f.kind = Fault::Kind::exit;
  else if (parts[0] == "error")
    f.kind = Fault::Kind::error;
  else if (parts[0] == "corrupt")
    f.kind = Fault::Kind::corrupt;
  else if (parts[0] == "slow")
    f.kind = Fault::Kind::slow;
  else
    throw bad();
  try {
    std::size_t used = 0;
    f.rank = std::stoi(parts[1], &used);
    if (used != parts[1].size()) throw bad();
    f.step = std::stoi(parts[2], &used);
    if (used != parts[2].size()) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (f.rank < 0 || f.step < 1) throw bad();
  return f;
}

}  // namespace

DataParallelPlan make_plan(const DataParallelOptions& o, int batch, int nranks) {
  DataParallelPlan p;
  p.accum_steps = o.accum_steps;
  p.ranks = nranks;
  p.local_sgd = o.local_sgd;
  if (o.no_overlap && o.overlap != "auto" && o.overlap != "none")
    throw UsageError(fmt::format("--no-overlap and --overlap {} contradict each other", o.overlap));
  p.overlap = o.no_overlap ? "none" : o.overlap;
  p.comm_core = o.comm_core;
  p.stream_buckets = !o.no_stream_buckets;
  p.no_comm = o.no_comm;
  if (o.no_comm && o.local_sgd > 0) throw UsageError("--no-comm and --local-sgd exclude each other");
  p.chunk_bytes = std::size_t(o.chunk_kib) * 1024;
  p.verify_steps = o.verify_steps;
  p.check_sync_every = o.check_sync_every;
  if (o.scaling == "weak" && o.global_batch > 0)
    throw UsageError(
        "--scaling weak and --global-batch exclude each other (weak scaling gives every rank --batch rows)");
  const int global_batch = o.global_batch > 0 ? o.global_batch : o.scaling == "strong" ? batch : 0;
  if (global_batch > 0) {
    p.scaling = "strong";
    const long long per_step = (long long)nranks * o.accum_steps;
    const char* flag = o.global_batch > 0 ? "--global-batch" : "--batch (the global batch under --scaling strong)";
    if (global_batch % per_step != 0)
      throw UsageError(fmt::format("{} {} is not divisible by ranks x --accum-steps = {} x {}", flag, global_batch,
                                   nranks, o.accum_steps));
    p.micro_batch = int(global_batch / per_step);
  } else {
    p.scaling = "weak";
    if (batch % o.accum_steps != 0)
      throw UsageError(fmt::format("--batch {} is not divisible by --accum-steps {}", batch, o.accum_steps));
    p.micro_batch = batch / o.accum_steps;
  }
  p.global_batch = p.micro_batch * p.accum_steps * nranks;
  if (o.local_sgd > 0 && o.accum_steps > 1) throw UsageError("--local-sgd and --accum-steps > 1 exclude each other");
  p.backend = o.backend;
  std::vector<std::string> names;
  try {
    names = coll::BackendOption{o.backend}.parse_algorithms(o.algorithms);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--algorithm: {}", e.what()));
  }
  for (const std::string& a : names) {
    const coll::Algorithm* alg = nullptr;
    try {
      alg = &coll::find_algorithm(a);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--algorithm: {}", e.what()));
    }
    if (alg->node_local) {  // 'all' leaves them out (some run on one node only); named, they run
      const std::vector<std::string> named = split_list(o.algorithms, "--algorithm list");
      if (std::find(named.begin(), named.end(), a) == named.end()) continue;
      // Local SGD averages the parameters outside the gradient reducer, which owns the node segment.
      if (o.local_sgd > 0)
        throw UsageError(
            fmt::format("--algorithm {}: local SGD averages parameters with a point-to-point schedule or "
                        "the library's allreduce; the node-local algorithms reduce gradients only",
                        a));
    }
    for (const std::string& c : split_list(o.bucket_caps, "--bucket-cap-mb list")) {
      try {
        p.cases.push_back({alg, coll::parse_bucket_cap(c)});
      } catch (const Error& e) {
        throw UsageError(fmt::format("--bucket-cap-mb: {}", e.what()));
      }
    }
  }
  p.shard = o.shard;
  p.gather_in_next_forward = o.shard_gather == "next-forward";
  if (p.sharded()) {
    if (o.local_sgd > 0 || o.no_comm)
      throw UsageError(
          fmt::format("--shard {} and {} exclude each other", o.shard, o.no_comm ? "--no-comm" : "--local-sgd"));
    // The shard follows the buckets, so one (algorithm, cap) case; the state would move otherwise.
    if (p.cases.size() != 1 || p.cases[0].algorithm->name != "ring")
      throw UsageError(
          fmt::format("--shard {} runs on --algorithm ring with one --bucket-cap-mb (got --algorithm {}, "
                      "--bucket-cap-mb {})",
                      o.shard, o.algorithms, o.bucket_caps));
  }
  p.fault = parse_fault(o.inject_fault);
  if (p.fault.kind != Fault::Kind::none && p.fault.rank >= nranks)
    throw UsageError(fmt::format("--inject-fault: rank {} does not exist ({} ranks)", p.fault.rank, nranks));
  return p;
}

}  // namespace sp::dp
