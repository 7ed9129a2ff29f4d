#include "trainers/common/run_report.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "core/measure/provenance.hpp"
#include "core/measure/samples.hpp"
#include "kernels/blas.hpp"
#include "kernels/cnn.hpp"
#include "kernels/gemm.hpp"
#include "kernels/isa.hpp"

namespace sp::train {

TraceWriter open_train_trace(const Session& s, const RunOptions& run) {
  Provenance prov = collect_provenance(s);
  prov.add("blas_config", kernels::blas_config());
  prov.add("blas_core", kernels::blas_core().name);
  prov.add("blas_core_reason", kernels::blas_core().reason);
  prov.add("kernel_isa", kernels::kernel_isa());
  prov.add("gemm_library", kernels::gemm_library());
  prov.add("conv_choice", kernels::conv2d_choice());
  prov.add("blas_threads", std::to_string(kernels::blas_threads()));
  return TraceWriter(s, trace_output_path(run.trace, prov), "train", prov);
}

std::string gradient_plan_line(const dp::DataParallelPlan& plan, bool pipeline) {
  if (plan.local_sgd > 0)
    return fmt::format("local SGD: parameters averaged every {} step(s) with {}{}", plan.local_sgd,
                       plan.cases[0].algorithm->name, plan.backend == "mpi" ? "" : fmt::format(" on {}", plan.backend));
  std::string cases;
  for (const auto& c : plan.cases)
    cases += fmt::format("{}{}/{}", cases.empty() ? "" : ", ", c.algorithm->name, c.cap.label);
  if (plan.no_comm) return "gradients: not communicated (--no-comm: every rank trains alone)";
  // One replica (one rank, or one per pipeline stage): the cases still name the steps in the trace.
  if (plan.ranks == 1)
    return fmt::format("gradients: one data-parallel replica{}, nothing to allreduce (cases {} name the steps only)",
                       pipeline ? " per stage" : "", cases);
  return fmt::format("gradients: bucketed allreduce (algorithm/cap MiB: {}){}", cases,
                     plan.backend == "mpi" ? "" : fmt::format(" on {}", plan.backend));
}

void write_train_trace(TraceWriter& trace, dp::DataParallelEngine& engine, const StepsTable& log,
                       const RunControlOptions& o, const RunFacts& f, const StepLoop::End& end, std::uint64_t hash) {
  Table ranks = rank_map_row();
  ranks.ints("blas_threads", "", "OpenBLAS thread count").push_back(kernels::blas_threads());
  // Each rank chose its core on its own node's CPU (kernels/blas.hpp): a mixed job shows here.
  ranks.strings("blas_core", "OpenBLAS kernel core this rank ran").push_back(kernels::blas_core().name);
  trace.write_table("steps", log.table(), TableScope::shared, "one row per optimizer step of this run (rank 0's view)");
  trace.write_table("ranks", ranks, TableScope::per_rank, "rank -> host -> core map");
  engine.write_trace(trace);
  trace.set_attribute("trainer", f.trainer);
  trace.set_attribute("model_name", f.model_name);
  trace.set_attribute("num_parameters", f.num_parameters);
  trace.set_attribute("batch_size", f.batch_size);
  trace.set_attribute(log.unit() + "s_per_step", std::int64_t(log.units_per_step()));
  trace.set_attribute("steps", std::int64_t(f.steps));
  trace.set_attribute("first_step", std::int64_t(f.first_step));
  trace.set_attribute("last_step", std::int64_t(end.done_step));
  trace.set_attribute("interrupted_by_signal", std::int64_t(end.stop_signal));
  trace.set_attribute("learning_rate", f.learning_rate);
  trace.set_attribute("min_lr", f.min_lr);
  trace.set_attribute("warmup_steps", std::int64_t(f.warmup_steps));
  trace.set_attribute("weight_decay", f.weight_decay);
  trace.set_attribute("grad_clip", f.grad_clip);
  trace.set_attribute("seed", std::int64_t(o.seed));
  trace.set_attribute("data_seed", std::int64_t(o.data_seed));
  trace.set_attribute("data_source", f.data_source);
  trace.set_attribute("data_fingerprint", f.data_fingerprint);
  trace.set_attribute("omp_threads", std::int64_t(f.threads));
  trace.set_attribute("blas_threads", std::int64_t(kernels::blas_threads()));
  trace.set_attribute("blas_config", kernels::blas_config());
  trace.set_attribute("blas_core", kernels::blas_core().name);
  trace.set_attribute("blas_core_reason", kernels::blas_core().reason);
  trace.set_attribute("resumed_from", o.resume);
  trace.set_attribute("init_from", o.init_from);
  trace.set_attribute(log.unit() + "s_per_s", log.units_per_s());
  trace.set_attribute("final_loss", end.loss);
  // Only measured values: without a validation the attributes are absent rather than NaN.
  trace.set_attribute("final_val_step", std::int64_t(end.val_step));
  if (end.val_step > 0) {
    trace.set_attribute("final_val_loss", end.val.loss);
    if (log.has_accuracy()) trace.set_attribute("final_val_accuracy", end.val.accuracy);
  }
  trace.set_attribute("parameter_hash", fmt::format("{:016x}", hash));
}

std::string validation_result(const StepLoop::End& end, bool accuracy) {
  if (!end.validation_on) return "val loss: off";
  if (end.val_step == 0) return "val loss: not measured";
  if (!accuracy) return fmt::format("val loss {:.4f}", end.val.loss);
  return fmt::format("val loss {:.4f}, val accuracy {:.2f}%", end.val.loss, 100 * end.val.accuracy);
}

void print_run_end(const Session& s, const dp::DataParallelEngine& engine, const std::vector<std::string>& lines,
                   const std::filesystem::path& trace_path, const RunControlOptions& o, const StepLoop::End& end) {
  if (s.rank != 0) return;
  for (const std::string& line : engine.case_summary_lines()) fmt::print("# {}\n", line);
  for (const std::string& line : lines) fmt::print("# {}\n", line);
  fmt::print("# trace: {}\n", trace_path.string());
  if (!o.save.empty()) fmt::print("# checkpoint: {} (step {})\n", o.save, end.done_step);
  if (end.stop_signal != 0)
    fmt::print(
        "# interrupted by signal {} after step {}{}\n", end.stop_signal, end.done_step,
        o.save.empty() ? " (no --save: nothing to resume from)" : fmt::format("; continue with --resume {}", o.save));
  std::fflush(stdout);
}

}  // namespace sp::train
