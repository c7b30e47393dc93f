//===- Reliability.cpp - Walls 15 and 19: failures and checkpoints --------===//
//
// A training run's fragility and its checkpoints: the fleet's MTBF from
// the MTTFs of the devices, hosts and network attachments the job uses
// (wall 15); the checkpoint's size, the pause to write it to the
// cluster's storage, Daly's optimum interval and the run's expected wall
// time with failures and restarts (wall 19). Without a storage or a
// `checkpoint.write_time`, only the size and the fleet's figures are
// lowered.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerReliability(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const System &Sys = *Ctx.Sys;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity *Cluster =
      Ctx.SystemEntity->Kind == "cluster" ? Ctx.SystemEntity : nullptr;

  // Wall 15: the components the job runs on.
  NodeId DeviceMttf = Ctx.orDefault(*Sys.Accel, DefaultId::DeviceMttf);
  NodeId Nodes = B.constant(0, "a bare device: no host counted");
  NodeId NodeMttf = Ctx.none("s", "0 s", "no host is counted");
  if (Sys.Node && Sys.NodeDevices) {
    Nodes = B.op(Op::Ceil, {B.op(Op::Div, {T.Devices, *Sys.NodeDevices})});
    B.label(Nodes, "training_nodes");
    NodeMttf = Ctx.orDefault(*Sys.Node, DefaultId::NodeMttf);
  }
  NodeId Attachments = B.constant(0, "one node: no network counted");
  NodeId NetworkMttf = Ctx.none("s", "0 s", "no network is counted");
  if (Cluster) {
    // The scale-out network counts once the job spans nodes.
    NodeId Spans =
        B.op(Op::Min, {B.op(Op::Sub, {Nodes, B.constant(1, "one node")}),
                       B.constant(1, "the network counts once")});
    Attachments = B.op(Op::Mul, {T.Devices, Spans});
    B.label(Attachments, "network_attachments");
    NetworkMttf = Ctx.orDefault(*Cluster, DefaultId::NetworkMttf);
  }
  NodeId Mtbf = B.apply(
      FormulaId::FleetMtbf,
      {T.Devices, DeviceMttf, Nodes, NodeMttf, Attachments, NetworkMttf}, "");
  B.publish(MetricId::FleetMtbf, Mtbf);

  // Wall 19: the checkpoint and the pause to write it.
  NodeId Params = Ctx.required(*Ctx.Model, "params", "the checkpoint's size");
  NodeId Size = B.apply(FormulaId::CheckpointSize,
                        {Params, T.WeightBytes, T.OptBytes}, "");
  B.publish(MetricId::CheckpointSize, Size);
  std::optional<NodeId> Write = Ctx.field(W, "checkpoint.write_time");
  if (!Write && Cluster)
    if (const ir::Entity *Storage = Ctx.entity(*Cluster, "storage"))
      Write = B.op(Op::Div, {Size, Ctx.required(*Storage, "bandwidth",
                                                "the checkpoint's write")});
  std::optional<NodeId> Run = B.G.find(MetricId::TimeToTrain);
  if (Run)
    B.publish(MetricId::UninterruptedProbability,
              B.apply(FormulaId::UninterruptedProbability, {*Run, Mtbf}, ""));
  if (!Write) {
    if (Run)
      B.publish(MetricId::ExpectedInterruptions, B.op(Op::Div, {*Run, Mtbf}));
    return true;
  }
  B.publish(MetricId::CheckpointWriteTime, *Write);
  B.publish(MetricId::CheckpointIntervalYoung,
            B.apply(FormulaId::YoungInterval, {*Write, Mtbf}, ""));
  // The interval given, or (0, the default) Daly's optimum: a leaf either
  // way, so that a sweep can vary it.
  NodeId Given = Ctx.orDefault(W, DefaultId::CheckpointInterval);
  NodeId Optimum = B.op(Op::Eq, {Given, Ctx.none("s", "0 s",
                                                 "Daly's "
                                                 "optimum")});
  B.label(Optimum, "checkpoint_interval_is_optimum");
  NodeId Interval = B.op(
      Op::Add, {Given, B.op(Op::Mul, {Optimum, B.apply(FormulaId::DalyInterval,
                                                       {*Write, Mtbf}, "")})});
  B.publish(MetricId::CheckpointInterval, Interval);
  if (!Run)
    return true;
  NodeId Wall = B.apply(
      FormulaId::DalyWallTime,
      {*Run, Interval, *Write, Ctx.orDefault(W, DefaultId::RestartTime), Mtbf},
      "");
  B.publish(MetricId::TimeToTrainWithFailures, Wall);
  B.publish(MetricId::Goodput, B.op(Op::Div, {*Run, Wall}));
  B.publish(MetricId::ExpectedInterruptions, B.op(Op::Div, {Wall, Mtbf}));
  return true;
}

} // namespace mlsc
