//===- TrainingStep.cpp - One training step ------------------------------===//
//
// One micro-batch's forward and backward on each kind of pipeline stage
// (GEMMs, attention, the non-GEMM operations' and the loss's traffic, the
// tensor-parallel collectives, ring attention, the expert all-to-alls),
// the slowest through the pipeline with its bubble (Narayanan et al.), then
// the gradient sync and the optimizer; MFU, HFU, tokens per second and the
// time to train.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Training.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

using graph::Op;
using PM = PhaseMetricId;

namespace {

/// One micro-batch's forward and backward on a pipeline stage of \p Layers
/// layers (and the output layer with its loss when \p Output), by part.
struct StageTimes {
  NodeId Compute, Memory, Tp, Cp, Ep;
};

StageTimes stageTimes(LoweringContext &Ctx, NodeId Layers, bool Output,
                      NodeId Tokens) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  StageTimes R;
  NodeId Gemm = B.apply(
      FormulaId::TrainingStageGemmFlops,
      {Tokens, Layers, T.TimeLayerParams, T.Hidden, T.Vocab,
       B.constant(Output ? 1 : 0, Output ? "the last stage's output layer"
                                         : "no output layer on this stage"),
       T.Recompute, T.TP},
      "");
  NodeId Attn = B.apply(
      FormulaId::TrainingStageAttentionFlops,
      {Tokens, Layers, T.Seq, T.AttnDim, T.Recompute, T.Fused, T.TP}, "");
  NodeId GemmTime =
      B.apply(FormulaId::ComputeTime, {Gemm, T.ComputePeak, T.EtaGemm}, "");
  NodeId AttnTime = B.apply(FormulaId::ComputeTime,
                            {Attn, T.ComputePeak, T.EtaAttention}, "");
  R.Compute = B.op(Op::Add, {GemmTime, AttnTime});

  NodeId ActInputs = B.op(
      Op::Sub, {T.FFNMatrices, B.constant(1, "the activation function's "
                                             "inputs: one plain, two gated")});
  // Forward and backward (twice the forward's traffic), and the forward
  // again with full recomputation.
  NodeId Passes =
      B.op(Op::Add, {B.constant(3, "forward and backward (twice the forward's "
                                   "traffic)"),
                     T.FullRecompute});
  NodeId Elementwise = B.apply(
      FormulaId::ElementwiseBytesPerToken,
      {T.Hidden, T.FFNWidth, ActInputs, T.ActBytes, T.TP, T.SP, Passes}, "");
  NodeId Bytes = B.op(Op::Mul, {B.op(Op::Mul, {Elementwise, Tokens}), Layers});
  // 8-bit GEMMs read operands cast from 16 bits.
  if (T.Fp8) {
    NodeId Casts = B.apply(
        FormulaId::Fp8CastBytesPerToken,
        {T.Hidden, T.AttnDim, T.KVDim, T.FFNWidth, T.FFNMatrices, T.TP, T.SP},
        "");
    Bytes =
        B.op(Op::Add,
             {Bytes, B.op(Op::Mul, {B.op(Op::Mul, {Casts, Tokens}), Layers})});
  }
  if (Output)
    Bytes = B.op(Op::Add, {Bytes, B.apply(FormulaId::CrossEntropyBytes,
                                          {Tokens, T.Vocab, T.TP}, "")});
  if (!T.FusedAttention)
    Bytes = B.op(Op::Add, {Bytes, B.apply(FormulaId::UnfusedScoreBytes,
                                          {T.MicroBatch, T.LocalSeq, T.Heads,
                                           Layers, T.ActBytes, T.Dropout, T.TP},
                                          "")});
  R.Memory = B.apply(FormulaId::MemoryTime, {Bytes, T.BW, T.EtaMem}, "");

  R.Tp = R.Cp = R.Ep =
      Ctx.none("s", "0 s", "no fabric: nothing is communicated");
  if (!T.HasFabric)
    return R;
  // Tensor-parallel collectives: two all-reduces a layer forward, two
  // backward, two more with full recomputation.
  NodeId Message =
      B.apply(FormulaId::TensorParallelMessage,
              {T.MicroBatch, T.LocalSeq, T.Hidden, T.ActBytes}, "");
  NodeId PerLayer =
      B.apply(FormulaId::TensorParallelLayerTime,
              {Message, T.TP, T.NodeRanks, T.IntraBW, T.IntraLatency, T.InterBW,
               T.InterLatency, T.EtaComm, T.CollectiveOverhead},
              "");
  NodeId LayerPasses =
      B.op(Op::Add, {B.constant(2, "forward and backward"), T.FullRecompute});
  // What overlap hides is at most the compute it hides behind.
  auto exposed = [&](NodeId Comm, DefaultId Overlap) {
    NodeId Hidden = B.op(
        Op::Min, {B.op(Op::Mul, {Comm, Ctx.orDefault(W, Overlap)}), R.Compute});
    return B.op(Op::Sub, {Comm, Hidden});
  };
  R.Tp =
      exposed(B.op(Op::Mul, {B.op(Op::Mul, {PerLayer, LayerPasses}), Layers}),
              DefaultId::OverlapTP);
  // Ring attention overlaps its exchange with the attention it feeds.
  NodeId KVWidth = B.op(Op::Mul, {B.constant(2, "keys and values"), T.KVDim});
  NodeId Chunk = B.op(
      Op::Div, {B.apply(FormulaId::TensorParallelMessage,
                        {T.MicroBatch, T.LocalSeq, KVWidth, T.ActBytes}, ""),
                B.op(Op::Min, {T.TP, T.KVHeads})});
  B.label(Chunk, "cp_kv_chunk");
  NodeId Ring =
      B.apply(FormulaId::ContextParallelRingTime,
              {Chunk, T.CP, B.op(Op::Mul, {T.TP, T.CP}), T.NodeRanks, T.IntraBW,
               T.IntraLatency, T.InterBW, T.InterLatency, T.EtaComm},
              "");
  R.Cp =
      B.op(Op::Max, {B.op(Op::Sub, {B.op(Op::Mul, {Ring, Layers}), AttnTime}),
                     Ctx.none("s", "0 s", "the exchange hidden")});
  // Expert parallelism: each MoE layer's dispatch and combine all-to-alls,
  // forward and backward, the busiest rank's routed tokens (top_k x
  // moe_imbalance a token) crossing the links tp x ep ranks span.
  if (T.Moe) {
    NodeId Routed =
        B.op(Op::Mul, {B.apply(FormulaId::TensorParallelMessage,
                               {B.op(Op::Mul, {T.MicroBatch, T.TopK}),
                                T.LocalSeq, T.Hidden, T.ActBytes},
                               ""),
                       T.Imbalance});
    B.label(Routed, "routed_bytes_per_microbatch");
    NodeId PerLayer = B.apply(
        FormulaId::ExpertAllToAllTime,
        {Routed, T.EP, B.op(Op::Mul, {T.TP, T.EP}), T.NodeRanks, T.IntraBW,
         T.IntraLatency, T.AllToAllBW, T.AllToAllLatency, T.EtaComm, T.TopK,
         T.Routing.Groups, T.Routing.GroupsPerToken, T.Routing.DispatchRatio},
        "");
    NodeId MoeLayers = B.op(Op::Mul, {Layers, T.MoeShare});
    R.Ep = exposed(
        B.op(Op::Mul,
             {B.op(Op::Mul, {PerLayer, B.constant(2, "forward and backward")}),
              MoeLayers}),
        DefaultId::OverlapEP);
  }
  return R;
}

} // namespace

bool lowerTrainingStep(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  NodeId Zero = Ctx.none("s", "0 s", "no communication is modelled here");

  // One micro-batch's forward and backward on each kind of stage; the
  // pipeline runs at the slowest, each part taken where it is largest.
  NodeId Tokens = B.op(Op::Mul, {T.MicroBatch, T.LocalSeq});
  B.label(Tokens, "microbatch_tokens_per_device");
  std::vector<StageTimes> Stages{
      stageTimes(Ctx, T.LastLayers, true, Tokens),
      stageTimes(Ctx, T.FirstLayers, false, Tokens),
      stageTimes(Ctx, T.MiddleLayers, false, Tokens)};
  // The slowest stage: the largest total, the last stage winning ties; its
  // parts are the micro-batch's (a 0/1 weight per stage).
  std::vector<NodeId> Totals;
  for (const StageTimes &St : Stages)
    Totals.push_back(
        B.op(Op::Add, {B.op(Op::Add, {St.Compute, St.Memory}),
                       B.op(Op::Add, {B.op(Op::Add, {St.Tp, St.Cp}), St.Ep})}));
  StagePick Slowest = largestStage(B, Totals[0], Totals[1], Totals[2]);
  auto slowest = [&](NodeId StageTimes::*Part) {
    return pickStage(B, Slowest, Stages[0].*Part, Stages[1].*Part,
                     Stages[2].*Part);
  };
  NodeId Compute = slowest(&StageTimes::Compute);
  B.label(Compute, "microbatch_compute_time");
  NodeId MemTime = slowest(&StageTimes::Memory);
  B.label(MemTime, "microbatch_memory_time");
  NodeId TpComm = slowest(&StageTimes::Tp);
  B.label(TpComm, "microbatch_tp_comm_time");
  NodeId CpComm = slowest(&StageTimes::Cp);
  B.label(CpComm, "microbatch_cp_comm_time");
  NodeId EpComm = slowest(&StageTimes::Ep);
  B.label(EpComm, "microbatch_ep_comm_time");

  // The stage's sends to its neighbours, once per model chunk.
  NodeId PpComm = Zero;
  if (T.HasFabric) {
    NodeId Message =
        B.apply(FormulaId::TensorParallelMessage,
                {T.MicroBatch, T.LocalSeq, T.Hidden, T.ActBytes}, "");
    NodeId Activation = B.op(Op::Div, {Message, T.TP});
    NodeId Stride = B.op(Op::Mul, {B.op(Op::Mul, {T.TP, T.CP}), T.DP});
    NodeId Sends =
        B.apply(FormulaId::PipelineStageSendTime,
                {Activation, T.VP, Stride, T.NodeRanks, T.IntraBW,
                 T.IntraLatency, T.InterBW, T.InterLatency, T.EtaComm},
                "");
    NodeId Shown = B.op(Op::Sub, {B.constant(1, "all of it"),
                                  Ctx.orDefault(W, DefaultId::OverlapPP)});
    NodeId HasPipeline =
        B.op(Op::Min, {B.op(Op::Sub, {T.PP, B.constant(1, "one stage")}),
                       B.constant(1, "a pipeline sends")});
    PpComm = B.op(Op::Mul, {B.op(Op::Mul, {Sends, HasPipeline}), Shown});
    B.label(PpComm, "microbatch_pp_comm_time");
  }
  NodeId Micro =
      B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Add, {Compute, MemTime}), TpComm}),
                     B.op(Op::Add, {B.op(Op::Add, {CpComm, PpComm}), EpComm})});
  B.publish(MetricId::MicrobatchTime, Micro);

  // The pipeline: m micro-batches and the fill and drain.
  NodeId Pipeline = B.apply(FormulaId::PipelineStepTime,
                            {T.Microbatches, T.PP, T.VP, Micro}, "");
  NodeId Busy = B.op(Op::Mul, {T.Microbatches, Micro});
  NodeId Bubble = B.op(Op::Sub, {Pipeline, Busy});
  B.publish(MetricId::BubbleFraction,
            B.apply(FormulaId::PipelineBubbleFraction,
                    {T.PP, T.Microbatches, T.VP}, ""));

  // The gradient sync over dp x cp, hidden behind the backward pass up to
  // overlap.dp of it and at most the backward's length.
  NodeId DpComm = Zero;
  NodeId Group = B.op(Op::Mul, {T.DP, T.CP});
  if (T.HasFabric) {
    // Wall 10's tiers: the pods the layout's nodes fill; a cluster without
    // them (a node) is one pod.
    NodeId Pods, Oversub, Far;
    if (Ctx.Network) {
      NodeId LayoutNodes =
          B.op(Op::Ceil, {B.op(Op::Div, {T.Devices, T.NodeRanks})});
      Pods =
          B.op(Op::Ceil, {B.op(Op::Div, {LayoutNodes, Ctx.Network->PodNodes})});
      B.label(Pods, "dp_pods");
      Oversub = Ctx.Network->Oversubscription;
      Far = Ctx.Network->FarLatency;
    } else {
      Pods = B.constant(1, "one pod: no cluster network");
      Oversub = B.constant(1, "no oversubscribed tier");
      Far = T.InterLatency;
    }
    NodeId PeersInNode = B.op(
        Op::Max, {B.op(Op::Div, {T.NodeRanks, B.op(Op::Mul, {T.TP, T.CP})}),
                  B.constant(1, "at least the rank itself")});
    NodeId Sync = B.apply(FormulaId::DataParallelSyncTime,
                          {T.SharedStage, T.GradBytes, T.WeightBytes, T.Zero,
                           Group, B.op(Op::Floor, {PeersInNode}), Pods,
                           T.IntraBW, T.IntraLatency, T.InterBW, T.InterLatency,
                           Oversub, Far, T.EtaComm},
                          "");
    if (T.Moe)
      Sync = B.op(
          Op::Add,
          {Sync,
           B.apply(FormulaId::DataParallelSyncTime,
                   {*T.ExpertStage, T.GradBytes, T.WeightBytes, T.Zero,
                    T.ExpertGroup,
                    B.op(Op::Max,
                         {B.op(Op::Floor, {B.op(Op::Div, {PeersInNode, T.EP})}),
                          B.constant(1, "at least the rank itself")}),
                    Pods, T.IntraBW, T.IntraLatency, T.InterBW, T.InterLatency,
                    Oversub, Far, T.EtaComm},
                   "expert_sync_time")});
    // The gradients are final only in the last micro-batch's backward
    // pass, which is all a reduce can hide behind; a sharded optimizer's
    // weight all-gather also hides behind the next step's first forward.
    NodeId Window = B.op(
        Op::Mul,
        {Compute,
         B.op(
             Op::Add,
             {B.constant(2.0 / 3.0, "the last micro-batch's backward pass: "
                                    "two thirds of its compute"),
              B.op(Op::Mul,
                   {B.constant(1.0 / 3.0, "the first micro-batch's forward "
                                          "pass: a third of its compute"),
                    B.op(Op::Min, {T.Zero, B.constant(1, "a sharded "
                                                         "optimizer gathers "
                                                         "the weights")})})})});
    B.label(Window, "dp_overlap_window");
    NodeId Hidden = B.op(
        Op::Min, {B.op(Op::Mul, {Sync, Ctx.orDefault(W, DefaultId::OverlapDP)}),
                  Window});
    DpComm = B.op(Op::Sub, {Sync, Hidden});
  }

  // The optimizer step over the state a device updates.
  auto shards = [&](NodeId Over) {
    return B.op(
        Op::Max,
        {B.op(Op::Mul, {Over, B.op(Op::Min, {T.Zero, B.constant(1, "sharded "
                                                                   "from "
                                                                   "ZeRO "
                                                                   "1")})}),
         B.constant(1, "unsharded")});
  };
  NodeId Updated = B.op(Op::Div, {T.SharedStage, shards(Group)});
  if (T.Moe)
    Updated =
        B.op(Op::Add,
             {Updated, B.op(Op::Div, {*T.ExpertStage, shards(T.ExpertGroup)})});
  B.label(Updated, "optimizer_params_per_device");
  NodeId OptBytes =
      B.apply(FormulaId::OptimizerStepBytes,
              {Updated, T.WeightBytes, T.GradBytes, T.OptBytes}, "");
  NodeId OptTime =
      B.apply(FormulaId::MemoryTime, {OptBytes, T.BW, T.EtaMem}, "");

  NodeId Step = B.op(Op::Add, {B.op(Op::Add, {Pipeline, DpComm}), OptTime});
  // Wall 20: DP-SGD's measured slowdown of the whole step.
  NodeId Slowdown = B.apply(FormulaId::DpSgdSlowdown,
                            {T.DpSgd, Ctx.orDefault(W, DefaultId::DpSgdNaive),
                             Ctx.orDefault(W, DefaultId::DpSgdGhost),
                             Ctx.orDefault(W, DefaultId::DpSgdBookkeeping)},
                            "");
  B.publish(MetricId::DpSgdSlowdownFactor, Slowdown);
  Step = B.op(Op::Mul, {Step, Slowdown});
  B.publish(MetricId::StepTime, Step);

  // The phase's parts: they add up to the step; the largest binds.
  auto steps = [&](NodeId PerMicro) {
    return B.op(Op::Mul, {T.Microbatches, PerMicro});
  };
  NodeId TpAll = steps(TpComm), CpAll = steps(CpComm), PpAll = steps(PpComm),
         EpAll = steps(EpComm);
  B.publish(MetricId::EpCommTime, EpAll);
  B.publish(MetricId::TpCommTime, TpAll);
  B.publish(MetricId::CpCommTime, CpAll);
  B.publish(MetricId::PpCommTime, PpAll);
  B.publish(MetricId::DpCommTime, DpComm);
  B.publish(MetricId::OptimizerTime, OptTime);
  NodeId TrainCompute = steps(Compute);
  NodeId TrainMemory = B.op(Op::Add, {steps(MemTime), OptTime});
  B.publish(PhaseId::Train, PM::ComputeTime, TrainCompute);
  B.publish(PhaseId::Train, PM::MemoryTime, TrainMemory);
  B.publish(
      PhaseId::Train, PM::CommTime,
      B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Add, {TpAll, CpAll}), PpAll}),
                     B.op(Op::Add, {EpAll, DpComm})}));
  B.publish(PhaseId::Train, PM::BubbleTime, Bubble);

  // Utilisation, throughput and the run.
  NodeId PerToken = B.apply(
      FormulaId::TrainingModelFlopsPerToken,
      {T.Layers, T.LayerParams, T.Seq, T.AttnDim, T.Hidden, T.Vocab}, "");
  NodeId Recomputed =
      B.apply(FormulaId::RecomputeFlopsPerToken,
              {T.Layers, T.LayerParams, T.Seq, T.AttnDim, T.Recompute}, "");
  NodeId StepTokens = B.op(Op::Mul, {T.GlobalBatch, T.Seq});
  B.label(StepTokens, "tokens_per_step");
  NodeId ModelFlops = B.op(Op::Mul, {PerToken, StepTokens});
  B.label(ModelFlops, "model_flops_per_step");
  NodeId HardwareFlops =
      B.op(Op::Mul, {B.op(Op::Add, {PerToken, Recomputed}), StepTokens});
  NodeId FlopsPerDevice = B.op(Op::Div, {ModelFlops, T.Devices});
  B.publish(PhaseId::Train, PM::Flops, FlopsPerDevice);
  // The step on the roofline (docs/reports.md): the ridge point, the bytes
  // its memory time moves (T_mem x BW x eta_mem), and the fraction of the
  // dense peak its compute time runs, counted in model FLOPs (with
  // recomputation the devices run more; HFU counts those).
  B.publish(MetricId::RidgePoint,
            B.apply(FormulaId::RidgePoint, {T.Peak, T.BW}, ""));
  B.publish(PhaseId::Train, PM::Bytes,
            B.op(Op::Mul, {B.op(Op::Mul, {TrainMemory, T.BW}), T.EtaMem}));
  B.publish(
      PhaseId::Train, PM::Efficiency,
      B.op(Op::Div, {FlopsPerDevice, B.op(Op::Mul, {T.Peak, TrainCompute})}));
  B.publish(MetricId::Mfu, B.apply(FormulaId::FlopUtilisation,
                                   {ModelFlops, Step, T.Devices, T.Peak}, ""));
  B.publish(MetricId::Hfu,
            B.apply(FormulaId::FlopUtilisation,
                    {HardwareFlops, Step, T.Devices, T.Peak}, ""));
  B.publish(MetricId::ModelFlopsPerDevice,
            B.op(Op::Div, {ModelFlops, B.op(Op::Mul, {Step, T.Devices})}));
  NodeId Throughput = B.op(Op::Div, {StepTokens, Step});
  B.publish(MetricId::TrainingThroughput, Throughput);
  std::optional<NodeId> Run;
  if (std::optional<NodeId> Budget = Ctx.field(W, "tokens"))
    Run = B.apply(FormulaId::TimeToTrain, {*Budget, Throughput}, "");
  else if (std::optional<NodeId> Steps = Ctx.field(W, "steps"))
    Run = B.op(Op::Mul, {*Steps, Step});
  if (Run) {
    B.publish(MetricId::TimeToTrain, *Run);
    B.publish(MetricId::DeviceHours, B.op(Op::Mul, {*Run, T.Devices}));
  }
  return true;
}

} // namespace mlsc
