//===- sim_bench.cpp - The serving simulator's speed ----------------------===//
//
// `make bench` runs this on bench/sim_bench.mls: Llama-3.1-8B on 16 H100
// replicas, Poisson arrivals at 80% of the replicas' capacity (the
// scenario's `throughput` over its output), prompts uniform in [768, 1280]
// and outputs in [192, 320] tokens, vLLM-style scheduling (256 sequences,
// 8,192 batched tokens), 1,000,000 requests, on one core. Prints
//
//   sim_requests_per_s   simulated requests a second of wall time
//   sim_seconds          the run's wall time
//   sim_peak_rss_mb      the process's peak resident memory
//   sim_ttft_p99_ms, sim_e2e_p50_s ...  what it found (for the record)
//
// A measurement, not a test: nothing here fails on a slow machine.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipeline.h"
#include "runtime/Evaluator.h"
#include "runtime/StepModel.h"
#include "runtime/sim/Simulator.h"

#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

#include <chrono>
#include <sys/resource.h>

using namespace mlsc;

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    fmt::print(stderr,
               "usage: mlsc_sim_bench bench/sim_bench.mls [requests]\n");
    return 2;
  }
  auto Buf = llvm::MemoryBuffer::getFile(Argv[1]);
  if (!Buf) {
    fmt::print(stderr, "cannot read {}\n", Argv[1]);
    return 1;
  }
  Compilation C;
  C.Options.DataDir = MLSC_SOURCE_DIR;
  if (!compile(C, std::move(*Buf)) || C.Graphs.empty()) {
    C.Diags.flush(llvm::errs());
    return 1;
  }
  Evaluator E(C.Graphs[0]);
  E.run();
  std::optional<StepModel> M = StepModel::of(E);
  if (!M) {
    fmt::print(stderr, "the scenario has no step model\n");
    return 1;
  }
  double Capacity = E.value(C.Graphs[0].get(MetricId::Throughput)) / 256;
  sim::Config Cfg;
  Cfg.Replicas = 16;
  Cfg.MaxSequences = 256;
  Cfg.MaxBatchedTokens = 8192;
  Cfg.ArrivalRate = 0.8 * 16 * Capacity;
  Cfg.Prompt = {sim::Length::Kind::Uniform, 768, 1280};
  Cfg.Output = {sim::Length::Kind::Uniform, 192, 320};
  Cfg.Requests = Argc > 2 ? std::stoull(Argv[2]) : 1000000;
  Cfg.Seed = 1;
  auto Start = std::chrono::steady_clock::now();
  sim::Result R =
      sim::simulate(Cfg, [&](const StepShape &S) { return M->shape(S).Time; });
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  struct rusage U;
  getrusage(RUSAGE_SELF, &U);
  fmt::print("sim_requests: {}\n", R.Completed);
  fmt::print("sim_arrival_rate: {:.2f}\n", Cfg.ArrivalRate);
  fmt::print("sim_seconds: {:.3f}\n", Seconds);
  fmt::print("sim_requests_per_s: {:.0f}\n", R.Completed / Seconds);
  fmt::print("sim_iterations: {}\n", R.Iterations);
  fmt::print("sim_peak_rss_mb: {:.1f}\n", U.ru_maxrss / 1024.0);
  fmt::print("sim_mean_batch: {:.1f}\n", R.MeanBatch);
  fmt::print("sim_ttft_p50_ms: {:.2f}\n", 1e3 * R.TTFT.P50);
  fmt::print("sim_ttft_p99_ms: {:.2f}\n", 1e3 * R.TTFT.P99);
  fmt::print("sim_tpot_p50_ms: {:.2f}\n", 1e3 * R.TPOT.P50);
  fmt::print("sim_e2e_p50_s: {:.3f}\n", R.E2E.P50);
  fmt::print("sim_e2e_p99_s: {:.3f}\n", R.E2E.P99);
  fmt::print("sim_output_tok_per_s: {:.0f}\n", R.Throughput);
  return 0;
}
