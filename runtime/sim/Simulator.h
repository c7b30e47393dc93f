//===- Simulator.h - A discrete-event simulator of LLM serving -----*- C++
//-*-===//
//
// The serving simulator's core (docs/simulator.md): requests arrive
// (Poisson), a router sends each to a replica, and each replica runs a
// vLLM-style continuous-batching scheduler - decodes first, then prompt
// chunks up to a token budget, admitting waiting requests while slots,
// budget and KV capacity allow. Every iteration's time comes from a step
// function over the iteration's shape (StepModel::shape, the same code the
// closed forms use), never from a copy of the walls.
//
// Seeded and deterministic: the same configuration and seed give the same
// result, bit for bit. Memory does not grow with the number of requests:
// arrivals are drawn one at a time, a request's slot is reused once it
// completes, and latencies go into fixed-size log-binned histograms (a
// percentile is within half a bin, 0.5%, of the exact one).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_SIM_SIMULATOR_H
#define MLSC_RUNTIME_SIM_SIMULATOR_H

#include "runtime/StepModel.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlsc::sim {

/// A distribution of token counts, at least 1.
struct Length {
  enum class Kind {
    Fixed,     ///< A
    Uniform,   ///< whole numbers from A to B
    Geometric, ///< on 1, 2, ...: mean A (success probability 1/A)
    Lognormal  ///< mean A, coefficient of variation B, rounded
  };
  Kind K = Kind::Fixed;
  double A = 1, B = 0;
  double mean() const;
};

enum class Routing {
  RoundRobin,       ///< in turn
  LeastOutstanding, ///< the replica with the fewest requests, waiting or
                    ///< running
  SharedQueue       ///< no routing at arrival: one queue, a request goes to the
                    ///< first replica with room when it starts an iteration
                    ///< (late binding; M/M/c's queue)
};

/// "round_robin" (\p Symbol: as the language spells it) or "round robin".
const char *routingName(Routing R, bool Symbol);

struct Config {
  unsigned Replicas = 1;
  unsigned MaxSequences = 256;    ///< running sequences a replica holds
  double MaxBatchedTokens = 8192; ///< new tokens an iteration runs
  /// KV-cache tokens a replica holds: a request takes its prompt's when
  /// admitted and one a decoded token; when the cache runs out the newest
  /// request is preempted (recomputed later). 0: unlimited.
  double KVCapacityTokens = 0;
  double ArrivalRate = 1; ///< requests a second, Poisson
  Length Prompt, Output;
  uint64_t Requests = 10000;
  uint64_t Seed = 1;
  Routing Route = Routing::RoundRobin;
};

/// An iteration's time from its shape.
using StepFunction = std::function<double(const StepShape &)>;

/// Latencies in log-spaced bins 1% wide, from 1 ns to 10^6 s: fixed
/// memory, a quantile within 0.5% (half a bin) of the exact one; the mean
/// is exact.
class Histogram {
public:
  Histogram();
  void add(double Seconds, uint64_t Count = 1);
  uint64_t count() const { return N; }
  double mean() const { return N ? Sum / static_cast<double>(N) : 0; }
  /// The value below which a fraction \p Q of the samples lie.
  double quantile(double Q) const;

private:
  std::vector<uint64_t> Bins;
  uint64_t N = 0;
  double Sum = 0;
};

struct Stats {
  uint64_t Count = 0;
  double Mean = 0, P50 = 0, P90 = 0, P99 = 0, P999 = 0;
};

struct Result {
  /// Time to first token; time per output token of each request, (E2E -
  /// TTFT) / (output - 1); gaps between tokens; end to end; waiting for a
  /// slot.
  Stats TTFT, TPOT, ITL, E2E, QueueWait;
  /// Every request that arrives completes or is rejected (its prompt and
  /// output would not fit an empty replica's KV cache).
  uint64_t Arrived = 0, Completed = 0, Rejected = 0, OutputTokens = 0,
           Iterations = 0;
  /// Requests preempted when the KV cache ran out, each counted every time
  /// (vLLM's recompute: it runs its prompt and output so far again).
  uint64_t Preemptions = 0;
  double PeakKVTokens = 0;    ///< the most KV tokens a replica held at once
  double Makespan = 0;        ///< first arrival to last completion
  double Throughput = 0;      ///< output tokens a second over the makespan
  double MeanInSystem = 0;    ///< time-average requests in the system (L)
  double ArrivalRateSeen = 0; ///< completed requests over the makespan
  double MeanBatch = 0;       ///< sequences an iteration, on average
};

/// Runs \p C to completion: every request arrives and completes.
/// Throws std::invalid_argument for a configuration it cannot run.
Result simulate(const Config &C, const StepFunction &Step);

/// A scenario's simulation: the configuration its `simulate` block and
/// graph gave, and what it found.
struct Simulated {
  Config Cfg;
  Result R;
};

/// Simulates the scenario of an evaluated graph with a `simulate` block,
/// timing iterations with its step model; none without a block, or, with
/// \p Why set, when the scenario cannot be simulated yet.
std::optional<Simulated> simulateScenario(const Evaluator &E, std::string &Why);

} // namespace mlsc::sim

#endif
