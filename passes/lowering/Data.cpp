//===- Data.cpp - Walls 8 and 9: feeding the devices ----------------------===//
//
// The bytes the devices consume a second (samples or training tokens a
// second x bytes each) against the read bandwidth of the cluster's
// storage (wall 8), and for CNN and encoder models the CPU cores that
// decode and augment the samples (wall 9). The stalls are reported; the
// throughput on the roofline is not lowered by them.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerData(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  const System &Sys = *Ctx.Sys;
  const ir::Entity &W = *Ctx.Workload;
  std::optional<NodeId> Demand;
  if (std::optional<NodeId> X = G.find(MetricId::SystemSampleThroughput)) {
    Demand = B.op(Op::Mul, {*X, Ctx.orDefault(W, DefaultId::SampleBytes)});
    // Wall 9: each node's cores prepare its devices' samples.
    if (Sys.Node) {
      NodeId PerNode = B.op(Op::Div, {*X, Sys.Nodes});
      B.label(PerNode, "samples_per_node");
      NodeId Rate = Ctx.orDefault(W, DefaultId::PreprocessRate);
      B.publish(MetricId::PreprocessCoresNeeded,
                B.apply(FormulaId::PreprocessCores, {PerNode, Rate}, ""));
      if (std::optional<NodeId> Cores = Ctx.field(*Sys.Node, "cpu_cores"))
        B.publish(MetricId::PreprocessStall,
                  B.apply(FormulaId::PreprocessStallShare,
                          {PerNode, *Cores, Rate}, ""));
    }
  } else if (std::optional<NodeId> X = G.find(MetricId::TrainingThroughput)) {
    std::optional<NodeId> Bytes = Ctx.field(W, "data.token_bytes");
    if (!Bytes)
      Bytes = B.apply(FormulaId::TokenIdBytes, {Ctx.Training.Vocab}, "");
    Demand = B.op(Op::Mul, {*X, *Bytes});
  }
  if (!Demand)
    return true;
  B.publish(MetricId::DataDemand, *Demand);
  // Wall 8: the cluster's storage.
  if (Ctx.SystemEntity->Kind == "cluster")
    if (const ir::Entity *Storage = Ctx.entity(*Ctx.SystemEntity, "storage")) {
      std::optional<NodeId> Read = Ctx.field(*Storage, "read_bandwidth");
      if (!Read)
        Read = Ctx.required(*Storage, "bandwidth", "the data's read");
      B.publish(MetricId::IngestionStall,
                B.apply(FormulaId::IngestionStallShare, {*Demand, *Read}, ""));
    }
  return true;
}

} // namespace mlsc
