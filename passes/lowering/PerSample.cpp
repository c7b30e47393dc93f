//===- PerSample.cpp - CNN and encoder models: batches of samples ---------===//
//
// Each device runs whole batches of `batch` samples (data parallel).
// Inference: a batch reads the weights once and does B samples' forward
// FLOPs. Training: 3x the forward FLOPs, weights + gradients + optimizer
// state (+ an encoder's activations) in memory, the parameters' traffic,
// and a ring all-reduce of the gradients across the devices, not
// overlapped. A CNN's activation memory and traffic are not counted
// (docs/walls.md says so). Three steps: the inputs and the kernel-class
// efficiency (wall 3), the memory a device needs (wall 2), and the batch on
// the roofline (walls 1, 2, 14).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Phase.h"
#include "passes/lowering/Steps.h"

#include <fmt/format.h>

namespace mlsc {

using graph::Op;
using PM = PhaseMetricId;

bool lowerPerSampleInputs(LoweringContext &Ctx) {
  PerSampleState &S = Ctx.PerSample;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  const ir::Entity &Precision = *Ctx.Precision;
  System &Sys = *Ctx.Sys;
  const ir::Entity &Accel = *Sys.Accel;
  bool Convolutional =
      Ctx.enumField<ModelFamily>(Model, "family") == ModelFamily::Cnn;
  S.Training = Ctx.enumField<WorkloadMode>(W, "mode") == WorkloadMode::Training;
  S.Params = Ctx.required(Model, "params", "weight bytes (wall 2)");
  // Stored weights carry a block-scaled format's scales.
  S.Bytes = Ctx.storageBytes(Precision, "bytes per parameter");
  if (!Ctx.checkPeakPrecision(W, Precision, Accel))
    return false;
  S.Peak =
      Ctx.required(Accel, "peak." + Precision.Name,
                   fmt::format("its dense {} peak; the workload runs in {}",
                               Precision.Name, Precision.Name));
  S.BW = Ctx.required(Accel, "hbm.bandwidth", "memory bandwidth");
  S.Capacity = Ctx.required(Accel, "hbm.capacity", "memory capacity");
  Sys.TDP = Ctx.required(Accel, "tdp", "power draw (wall 18)");
  S.Batch = Ctx.orDefault(W, DefaultId::Batch);
  S.EtaMem = Ctx.memoryEfficiency(W, &Accel);
  std::optional<NodeId> Forward, Eta;
  if (Convolutional) {
    Forward = Ctx.required(Model, "flops_per_sample",
                           "the forward FLOPs of one sample");
    // Inference engines (TensorRT-class) fuse more than training's cuDNN
    // steps: their own default, unless the workload gives `kernels.conv`.
    Eta = Ctx.kernelEfficiency(W, S.Training || W.field("kernels.conv")
                                      ? DefaultId::KernelConv
                                      : DefaultId::KernelConvInference);
  } else {
    const char *Why = "the encoder's attention FLOPs";
    NodeId Layers = Ctx.required(Model, "layers", Why);
    NodeId Heads = Ctx.required(Model, "heads", Why);
    NodeId HeadDim = Ctx.required(Model, "head_dim", Why);
    NodeId Seq = Ctx.required(W, "seq", "tokens per encoder sample");
    NodeId Gemm = Ctx.kernelEfficiency(W, DefaultId::KernelGemm);
    NodeId Attention = Ctx.kernelEfficiency(W, DefaultId::KernelAttention);
    if (S.Training && !Ctx.Failed) {
      NodeId Hidden =
          Ctx.required(Model, "hidden", "the encoder's activations");
      if (!Ctx.Failed)
        S.Activations = B.apply(FormulaId::TransformerActivationBytes,
                                {Layers, Seq, S.Batch, Hidden, Heads}, "");
    }
    if (!Ctx.Failed) {
      // The kernel classes blend per sample; a batch has the same mix.
      NodeId AttnDim = B.op(Op::Mul, {Heads, HeadDim});
      Forward = B.apply(FormulaId::EncoderFlopsPerSample,
                        {S.Params, Layers, AttnDim, Seq}, "flops_per_sample");
      NodeId AttnFlops =
          B.apply(FormulaId::EncoderAttentionFlops, {Layers, AttnDim, Seq},
                  "attention_flops_per_sample");
      Eta = B.apply(FormulaId::BlendedEfficiency,
                    {*Forward, AttnFlops, Gemm, Attention}, "");
    }
  }
  if (S.Training)
    S.Optimizer = Ctx.orDefault(W, DefaultId::OptimizerBytes);
  if (Ctx.Failed || !Forward || !Eta)
    return false;
  S.Forward = *Forward;
  S.Efficiency = *Eta;
  B.publish(MetricId::Batch, S.Batch);
  B.publish(MetricId::DeviceMemory, S.Capacity);
  return true;
}

bool lowerPerSampleMemory(LoweringContext &Ctx) {
  // Wall 2: the weights, and in training the gradients, optimizer state
  // and (encoders) activations.
  PerSampleState &S = Ctx.PerSample;
  GraphBuilder &B = Ctx.B;
  NodeId Unit = B.constant(1, "one device per replica");
  S.Weights =
      B.apply(FormulaId::WeightBytes, {S.Params, S.Bytes, Unit, Unit}, "");
  B.publish(MetricId::WeightsPerDevice, S.Weights);
  NodeId Memory = S.Weights;
  S.Moved = S.Weights;
  if (S.Training) {
    Memory = B.apply(FormulaId::TrainingStateBytes,
                     {S.Params, S.Bytes, *S.Optimizer}, "");
    B.publish(MetricId::TrainingStatePerDevice, Memory);
    if (S.Activations) {
      B.publish(MetricId::ActivationsPerDevice, *S.Activations);
      Memory = B.op(Op::Add, {Memory, *S.Activations});
    }
    S.Moved = B.apply(FormulaId::TrainingStepBytes,
                      {S.Params, S.Bytes, *S.Optimizer}, "");
  }
  B.publish(MetricId::MemoryPerDevice, Memory);
  NodeId Fits = B.op(Op::Le, {Memory, S.Capacity});
  B.publish(MetricId::MemoryFits, Fits);
  B.publish(MetricId::Feasible, Fits);
  return true;
}

bool lowerPerSampleBatch(LoweringContext &Ctx) {
  PerSampleState &S = Ctx.PerSample;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const System &Sys = *Ctx.Sys;
  NodeId PerSample = S.Training
                         ? B.apply(FormulaId::TrainingFlopsPerSample,
                                   {S.Forward}, "training_flops_per_sample")
                         : S.Forward;

  // Wall 14: data-parallel training all-reduces the gradients over the
  // fabric between the devices (between nodes for a cluster).
  NodeId Comm;
  const ir::Entity *Fabric = !S.Training || !Sys.Node ? nullptr
                             : Ctx.SystemEntity->Kind == "cluster"
                                 ? Ctx.entity(*Sys.Node, "inter")
                                 : Ctx.entity(*Sys.Node, "intra");
  if (Fabric) {
    NodeId FabricBW =
        Ctx.required(*Fabric, "bandwidth", "the gradient all-reduce");
    NodeId Latency =
        Ctx.required(*Fabric, "latency", "the gradient all-reduce");
    NodeId EtaComm = Ctx.orDefault(W, DefaultId::CommEfficiency);
    if (Ctx.Failed)
      return false;
    Comm = B.apply(FormulaId::RingAllReduceTime,
                   {S.Weights, Sys.Devices, FabricBW, EtaComm, Latency}, "");
  } else {
    Comm = Ctx.none("s", "0 s",
                    S.Training ? "no fabric between the devices: no gradient "
                                 "all-reduce is modelled"
                               : "inference replicas do not communicate");
  }

  // Walls 1-3: the roofline of one batch.
  Roofline M;
  M.Peak = S.Peak;
  M.BW = S.BW;
  M.EtaMem = S.EtaMem;
  PhaseWork Work;
  Work.Flops = B.op(Op::Mul, {PerSample, S.Batch});
  B.publish(PhaseId::Batch, PM::Flops, Work.Flops);
  Work.Bytes = S.Moved;
  if (S.Training)
    B.publish(PhaseId::Batch, PM::Bytes, S.Moved);
  Work.Efficiency = S.Efficiency;
  Work.Comm = Comm;
  NodeId Step = lowerPhase(Ctx, PhaseId::Batch, M, Work);
  B.publish(MetricId::RidgePoint,
            B.apply(FormulaId::RidgePoint, {S.Peak, S.BW}, ""));
  if (S.Training) {
    B.publish(MetricId::StepTime, Step);
    // Model FLOP utilisation: the model's FLOPs (no recomputation) over the
    // step time at dense peak (Chowdhery et al., PaLM, arXiv 2204.02311,
    // appendix B).
    NodeId Achieved = B.op(Op::Div, {Work.Flops, Step});
    B.publish(MetricId::Mfu, B.op(Op::Div, {Achieved, S.Peak}));
  }
  NodeId PerDevice = B.apply(FormulaId::SampleThroughput, {S.Batch, Step}, "");
  B.publish(MetricId::SampleThroughput, PerDevice);
  B.publish(MetricId::SystemSampleThroughput,
            B.op(Op::Mul, {PerDevice, Sys.Devices}));
  return true;
}

} // namespace mlsc
