//===- FromGraph.cpp - A scenario's simulation from its evaluated graph ---===//
//
// Reads the values of the graph's SimInputs (lowered from a `simulate`
// block) into a sim::Config and runs it with the graph's step model. Never
// reads the IR (docs/simulator.md).
//
//===----------------------------------------------------------------------===//

#include "runtime/sim/Simulator.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace mlsc::sim {

namespace {

Length lengthOf(double Mean, double CV) {
  if (CV > 0)
    return {Length::Kind::Lognormal, Mean, CV};
  return {Length::Kind::Fixed, std::round(Mean), 0};
}

} // namespace

std::optional<Simulated> simulateScenario(const Evaluator &E,
                                          std::string &Why) {
  const graph::Graph &G = E.graph();
  if (!G.Sim)
    return std::nullopt;
  const graph::SimInputs &In = *G.Sim;
  if (!In.NotSimulated.empty()) {
    Why = In.NotSimulated;
    return std::nullopt;
  }
  std::optional<StepModel> M = StepModel::of(E);
  if (!M) {
    Why = "the scenario has no step model";
    return std::nullopt;
  }
  auto v = [&](graph::NodeId N) { return E.value(N); };
  Config C;
  C.Replicas = static_cast<unsigned>(std::max(1.0, std::floor(v(In.Replicas))));
  C.MaxSequences = static_cast<unsigned>(std::max(1.0, v(In.Slots)));
  C.MaxBatchedTokens = v(In.MaxBatchedTokens);
  C.KVCapacityTokens = std::floor(v(In.KVTokens));
  C.ArrivalRate = v(In.Arrival);
  C.Prompt = lengthOf(v(In.Prompt), v(In.PromptCV));
  C.Output = lengthOf(v(In.Output), v(In.OutputCV));
  if (In.PromptMin.isValid())
    C.Prompt = {Length::Kind::Uniform, std::round(v(In.PromptMin)),
                std::round(v(In.PromptMax))};
  if (In.OutputMin.isValid())
    C.Output = {Length::Kind::Uniform, std::round(v(In.OutputMin)),
                std::round(v(In.OutputMax))};
  C.Requests = static_cast<uint64_t>(v(In.Requests));
  C.Seed = static_cast<uint64_t>(v(In.Seed));
  // The choice's code: its position in the schema's SimRouter.
  double Router = v(In.Router);
  C.Route = Router >= 2   ? Routing::SharedQueue
            : Router >= 1 ? Routing::LeastOutstanding
                          : Routing::RoundRobin;
  if (C.MaxBatchedTokens < C.MaxSequences) {
    Why = fmt::format("simulate.max_batched_tokens ({}) must hold a decode "
                      "token of each of the {} slots",
                      C.MaxBatchedTokens, C.MaxSequences);
    return std::nullopt;
  }
  if (!(C.KVCapacityTokens >= 1)) {
    Why = "no memory is left for the KV cache";
    return std::nullopt;
  }
  if (!(C.ArrivalRate > 0) || !std::isfinite(C.ArrivalRate)) {
    Why = "the arrival rate is not a positive number";
    return std::nullopt;
  }
  Simulated Out;
  Out.Cfg = C;
  try {
    Out.R = simulate(C, [&](const StepShape &S) { return M->shape(S).Time; });
  } catch (const std::invalid_argument &E) {
    Why = E.what();
    return std::nullopt;
  }
  return Out;
}

} // namespace mlsc::sim
