//===- Queue.cpp - Wall 7: the queue in front of a decoder's slots --------===//
//
// Requests arriving at the workload's rate wait for one of the system's
// slots (replicas x batch): an M/G/c queue whose ln C is computed once and
// read by every TTFT and latency percentile, and, given a P99 latency
// target, the fewest replicas that meet it. Without an arrival rate there
// is no queue, and the percentiles stay unavailable.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerQueue(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  if (!D.Arrival)
    return true;
  NodeId Arrival = *D.Arrival;
  NodeId CV = Ctx.orDefault(W, DefaultId::ServiceCV);
  B.publish(
      MetricId::Utilisation,
      B.apply(FormulaId::Utilisation, {Arrival, D.Service, D.Servers}, ""));
  B.publish(
      MetricId::QueueStable,
      B.apply(FormulaId::QueueIsStable, {Arrival, D.Service, D.Servers}, ""));
  // ln C(c, a) once; every percentile reads it.
  NodeId LogC = B.apply(FormulaId::LogErlangC, {Arrival, D.Service, D.Servers},
                        "queue.log_erlang_c");
  struct Percentile {
    double P;
    MetricId Ttft, Latency;
  };
  const Percentile Percentiles[] = {
      {0.5, MetricId::TtftP50, MetricId::LatencyP50},
      {0.9, MetricId::TtftP90, MetricId::LatencyP90},
      {0.99, MetricId::TtftP99, MetricId::LatencyP99},
      {0.999, MetricId::TtftP999, MetricId::LatencyP999}};
  for (const Percentile &P : Percentiles) {
    NodeId Level = B.constant(P.P, "the percentile");
    B.publish(P.Ttft, B.apply(FormulaId::TtftQuantileGiven,
                              {LogC, Arrival, D.Service, D.Servers, CV,
                               D.FirstToken, Level},
                              ""));
    B.publish(P.Latency,
              B.apply(FormulaId::LatencyQuantileGiven,
                      {LogC, Arrival, D.Service, D.Servers, CV, Level}, ""));
  }
  // Sizing: the fewest replicas of `batch` slots whose P99 meets a target.
  if (std::optional<NodeId> Target = Ctx.field(W, "latency_target")) {
    NodeId Slots = B.apply(FormulaId::ServersForP99Latency,
                           {Arrival, D.Service, CV, *Target}, "servers_needed");
    B.publish(MetricId::ReplicasNeeded,
              B.op(Op::Ceil, {B.op(Op::Div, {Slots, D.Batch})}));
  }
  return true;
}

} // namespace mlsc
