//===- Simulation.cpp - What the serving simulator needs of a scenario ----===//
//
// A scenario with a `simulate` block exports graph::SimInputs: the
// simulation's options (requests, seed, router, the iteration's token
// budget), the replicas and their slots, the arrival rate, the prompt and
// output lengths (mean and spread), and the KV-cache tokens a replica's
// free memory holds. The simulator (runtime/sim/, docs/simulator.md)
// reads their values after evaluation; it never reads the IR. A scenario
// the simulator cannot play yet says why (NotSimulated).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

#include <fmt/format.h>

#include <tuple>

namespace mlsc {

using graph::Op;

/// Requests a validation anchor's scenario is simulated with when it has
/// no `simulate` block: enough for a P99 within a few percent.
constexpr double ValidationRequests = 20000;

bool lowerSimulation(LoweringContext &Ctx) {
  const ir::Entity &S = Ctx.Scenario;
  std::optional<NodeId> Requests = Ctx.field(S, "simulate.requests");
  if (!Requests && !Ctx.C.Options.SimulateServing)
    return true;
  GraphBuilder &B = Ctx.B;
  DecoderState &D = Ctx.Decoder;
  const ir::Entity &W = *Ctx.Workload;
  graph::SimInputs In;
  In.Requested = Requests.has_value();
  In.Requests = Requests ? *Requests
                         : B.constant(ValidationRequests,
                                      "requests `mlsc validate` simulates");
  In.Seed = Ctx.orDefault(S, DefaultId::SimSeed);
  In.Router = Ctx.choice(S, "simulate.router", 0,
                         "0: round robin, 1: least outstanding, 2: a shared "
                         "queue");
  In.MaxBatchedTokens = Ctx.orDefault(S, DefaultId::SimMaxBatchedTokens);
  In.Replicas = D.Replicas;
  In.Slots = D.Batch;
  In.Prompt = D.Prompt;
  In.Output = D.Output;
  auto spread = [&](const char *Field) {
    std::optional<NodeId> CV = Ctx.field(W, Field);
    return CV ? *CV : B.constant(0, "one length: the workload gives no spread");
  };
  In.PromptCV = spread("prompt_cv");
  In.OutputCV = spread("output_cv");
  // Uniform lengths: both ends, or neither.
  for (auto [Min, Max, Lo, Hi] :
       {std::tuple{"simulate.prompt_min", "simulate.prompt_max", &In.PromptMin,
                   &In.PromptMax},
        std::tuple{"simulate.output_min", "simulate.output_max", &In.OutputMin,
                   &In.OutputMax}}) {
    std::optional<NodeId> A = Ctx.field(S, Min), B2 = Ctx.field(S, Max);
    if (A.has_value() != B2.has_value()) {
      const char *Given = A ? Min : Max;
      Ctx.C.Diags.report(
          DiagKind::MissingInput, S.field(Given)->Range,
          fmt::format("`{}` needs `{}` too: simulated lengths are uniform "
                      "between the two",
                      Given, A ? Max : Min));
      Ctx.Failed = true;
      return false;
    }
    if (A) {
      if (Ctx.foldedNumber(S, Min) > Ctx.foldedNumber(S, Max)) {
        Ctx.C.Diags.report(DiagKind::DomainError, S.field(Min)->Range,
                           fmt::format("`{}` exceeds `{}`", Min, Max));
        Ctx.Failed = true;
        return false;
      }
      *Lo = *A;
      *Hi = *B2;
    }
  }
  // The tokens whose KV the free memory holds: free bytes over a token's
  // bytes on a device.
  NodeId Free =
      B.op(Op::Sub, {B.op(Op::Sub, {D.Capacity, D.FixedMemory}), D.Reserve});
  In.KVTokens = B.op(
      Op::Floor, {B.op(Op::Div, {B.op(Op::Mul, {Free, D.KVShards}), D.KV})});
  B.label(In.KVTokens, "sim_kv_tokens");
  if (D.Arrival)
    In.Arrival = *D.Arrival;
  else
    In.NotSimulated = "the workload gives no arrival rate";
  if (D.Static)
    In.NotSimulated = "static batching is not simulated yet";
  else if (D.Draft)
    In.NotSimulated = "speculative decoding is not simulated yet";
  else if (D.PrefillReplicas)
    In.NotSimulated = "prefill/decode disaggregation is not simulated yet";
  else if (Ctx.foldedNumber(W, "parallel.pp") > 1)
    In.NotSimulated = "pipeline parallelism is not simulated yet";
  B.G.Sim = In;
  return true;
}

} // namespace mlsc
