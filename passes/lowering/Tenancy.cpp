//===- Tenancy.cpp - Wall 16: waiting for a shared cluster ----------------===//
//
// A cluster with `tenancy.arrival` is shared: jobs like the scenario's
// arrive for it and queue for slots of the devices each needs, held for
// the job's wall time (with failures and restarts when wall 19 models
// them). The mean wait is the M/G/c queue's (Erlang C, Allen-Cunneen).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerTenancy(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  const System &Sys = *Ctx.Sys;
  if (Ctx.SystemEntity->Kind != "cluster")
    return true;
  const ir::Entity &Cluster = *Ctx.SystemEntity;
  std::optional<NodeId> Arrival = Ctx.field(Cluster, "tenancy.arrival");
  std::optional<NodeId> Held = G.find(MetricId::TimeToTrainWithFailures);
  if (!Held)
    Held = G.find(MetricId::TimeToTrain);
  if (!Arrival || !Held)
    return true;
  NodeId Slots = B.op(Op::Floor, {B.op(Op::Div, {Sys.Devices, T.Devices})});
  B.publish(MetricId::JobSlots, Slots);
  B.publish(MetricId::ClusterUtilisation,
            B.apply(FormulaId::Utilisation, {*Arrival, *Held, Slots}, ""));
  NodeId LogC = B.apply(FormulaId::LogErlangC, {*Arrival, *Held, Slots}, "");
  B.publish(MetricId::JobQueueWait,
            B.apply(FormulaId::JobQueueWait,
                    {LogC, *Arrival, *Held, Slots,
                     Ctx.orDefault(Cluster, DefaultId::JobDurationCV)},
                    ""));
  return true;
}

} // namespace mlsc
