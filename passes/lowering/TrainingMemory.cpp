//===- TrainingMemory.cpp - Wall 2 in training ---------------------------===//
//
// The memory a device needs in training: its pipeline stage's weights,
// gradients and optimizer state, sharded by the ZeRO stage over the
// data-parallel group (an MoE model's routed experts over their own), and
// the activations of the micro-batches in flight (Korthikanti et al.).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Training.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

using graph::Op;

bool lowerTrainingMemory(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  // The parameters of the device that holds most: the first stage's
  // layers and embedding, a middle stage's layers, or the last stage's
  // layers and output layer; one stage alone holds both tables unless
  // they are tied.
  bool Tied = Ctx.foldedNumber(*Ctx.Model, "tied_embeddings") != 0 &&
              Ctx.Model->field("tied_embeddings");
  auto stageParams = [&](NodeId Layers, double Tables, const char *Why) {
    return B.apply(FormulaId::TrainingStageParams,
                   {Layers, T.StoredLayerParams, T.Hidden, T.Vocab,
                    B.constant(Tables, Why), T.TP},
                   "");
  };
  // (The stages are built for any pp, so that a sweep may vary it: with
  // one stage the "last" holds every layer and both tables.)
  NodeId OneStage = B.op(
      Op::Sub, {B.constant(1, "one stage"),
                B.op(Op::Min, {B.op(Op::Sub, {T.PP, B.constant(1, "one "
                                                                  "stage")}),
                               B.constant(1, "more than one stage")})});
  NodeId LastTables =
      B.op(Op::Add,
           {B.constant(1, "the last stage's output layer"),
            B.op(Op::Mul, {OneStage,
                           B.constant(Tied ? 0 : 1, Tied ? "tied: one table"
                                                         : "untied: the "
                                                           "embedding too")})});
  NodeId FirstParams =
      stageParams(T.FirstLayers, 1, "the first stage's embedding");
  NodeId LastParams = B.apply(
      FormulaId::TrainingStageParams,
      {T.LastLayers, T.StoredLayerParams, T.Hidden, T.Vocab, LastTables, T.TP},
      "");
  NodeId MiddleParams =
      stageParams(T.MiddleLayers, 0, "a middle stage: layers only");
  T.StageParams =
      B.op(Op::Max, {B.op(Op::Max, {FirstParams, LastParams}), MiddleParams});
  B.publish(MetricId::StageParams, T.StageParams);
  // ZeRO shards over the gradient-reducing group, dp x cp; an MoE model's
  // routed experts over their own, dp x cp / ep (each expert lives on one
  // rank of every ep).
  NodeId Group = B.op(Op::Mul, {T.DP, T.CP});
  B.label(Group, "data_parallel_group");
  T.SharedStage = T.StageParams;
  if (T.Moe) {
    // The experts of the stage that holds most (a 0/1 weight per stage,
    // the last winning ties, as in the step).
    StagePick Fullest = largestStage(B, LastParams, FirstParams, MiddleParams);
    NodeId Layers =
        pickStage(B, Fullest, T.LastLayers, T.FirstLayers, T.MiddleLayers);
    B.label(Layers, "layers_of_the_fullest_stage");
    T.ExpertStage =
        B.op(Op::Div, {B.op(Op::Mul, {Layers, T.ExpertLayerParams}), T.TP});
    B.label(*T.ExpertStage, "expert_params_per_device");
    T.SharedStage = B.op(Op::Sub, {T.StageParams, *T.ExpertStage});
    T.ExpertGroup = B.op(Op::Div, {Group, T.EP});
    B.label(T.ExpertGroup, "expert_data_parallel_group");
  }
  auto sharded = [&](NodeId PerParam, double From, const char *Why) {
    NodeId K = B.constant(From, Why);
    NodeId Bytes = B.apply(FormulaId::ZeroShardedBytes,
                           {T.SharedStage, PerParam, Group, T.Zero, K}, "");
    if (T.Moe)
      Bytes = B.op(Op::Add, {Bytes, B.apply(FormulaId::ZeroShardedBytes,
                                            {*T.ExpertStage, PerParam,
                                             T.ExpertGroup, T.Zero, K},
                                            "")});
    return Bytes;
  };
  NodeId Weights =
      sharded(T.WeightBytes, 3, "ZeRO shards weights from stage 3");
  NodeId Grads = sharded(T.GradBytes, 2, "ZeRO shards gradients from stage 2");
  NodeId Opt =
      sharded(T.OptBytes, 1, "ZeRO shards the optimizer state from stage 1");
  B.publish(MetricId::WeightsPerDevice, Weights);
  B.publish(MetricId::GradientsPerDevice, Grads);
  B.publish(MetricId::OptimizerPerDevice, Opt);

  // Activations: the first stages hold their layers' for the micro-batches
  // in flight; the last, one micro-batch's and the output layer's.
  NodeId Layer =
      B.apply(FormulaId::TrainingLayerActivationBytes,
              {T.LocalSeq, T.MicroBatch, T.Hidden, T.Heads, T.AttnDim, T.KVDim,
               T.FFNWidth, T.FFNMatrices, T.ActBytes, T.TP, T.SP, T.Recompute,
               T.Fused, T.Dropout},
              "activations_per_layer");
  // The first stage warms up the most micro-batches, the second one
  // fewer (one fewer under 1F1B, 2/v fewer interleaved); with a lighter
  // first stage (Llama 3 405B's: one layer fewer) the second can hold more.
  NodeId InFlight = B.apply(FormulaId::MicroBatchesInFlight,
                            {T.PP, T.Microbatches, T.VP, T.VPGroup}, "");
  NodeId SecondInFlight = B.apply(
      FormulaId::MicroBatchesInFlight,
      {B.op(Op::Sub, {T.PP, B.constant(1, "the second stage: one fewer to "
                                          "wait for")}),
       T.Microbatches, T.VP, T.VPGroup},
      "second_stage_microbatches_in_flight");
  NodeId First =
      B.op(Op::Max,
           {B.op(Op::Mul, {B.op(Op::Mul, {T.FirstLayers, Layer}), InFlight}),
            B.op(Op::Mul,
                 {B.op(Op::Mul, {T.MiddleLayers, Layer}), SecondInFlight})});
  NodeId Output =
      B.apply(FormulaId::OutputLayerActivationBytes,
              {T.LocalSeq, T.MicroBatch, T.Hidden, T.Vocab, T.TP}, "");
  NodeId Last = B.op(Op::Add, {B.op(Op::Mul, {T.LastLayers, Layer}), Output});
  NodeId Activations = B.op(Op::Max, {First, Last});
  B.publish(MetricId::ActivationsPerDevice, Activations);
  NodeId Memory =
      B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Add, {Weights, Grads}), Opt}),
                     Activations});
  // Wall 20: naive DP-SGD's per-sample gradients.
  NodeId PerSample =
      B.apply(FormulaId::PerSampleGradientBytes,
              {T.DpSgd, T.MicroBatch, T.StageParams, T.GradBytes}, "");
  B.publish(MetricId::PerSampleGradientsPerDevice, PerSample);
  Memory = B.op(Op::Add, {Memory, PerSample});
  // Buffers (communication buckets, workspaces) when the workload gives
  // them.
  if (std::optional<NodeId> Buffers =
          Ctx.field(*Ctx.Workload, "memory_reserve")) {
    B.publish(MetricId::RuntimeReserve, *Buffers);
    Memory = B.op(Op::Add, {Memory, *Buffers});
  }
  B.publish(MetricId::MemoryPerDevice, Memory);
  B.publish(MetricId::DeviceMemory, T.Capacity);
  NodeId Fits = B.op(Op::Le, {Memory, T.Capacity});
  B.publish(MetricId::MemoryFits, Fits);
  B.publish(MetricId::Feasible, Fits);
  return true;
}

} // namespace mlsc
