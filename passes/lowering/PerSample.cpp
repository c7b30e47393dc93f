//===- PerSample.cpp - CNN and encoder models: batches of samples ---------===//
//
// Each device runs whole batches of `batch` samples (data parallel).
// Inference: a batch reads the weights once and does B samples' forward
// FLOPs. Training: 3x the forward FLOPs, weights + gradients + optimizer
// state (+ an encoder's activations) in memory, the parameters' traffic,
// and a ring all-reduce of the gradients across the devices, not
// overlapped. A CNN's activation memory and traffic are not counted
// (docs/walls.md says so).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

#include <fmt/format.h>

namespace mlsc {

using graph::Op;
using PM = PhaseMetricId;

bool lowerPerSample(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  const ir::Entity &Precision = *Ctx.Precision;
  System &Sys = *Ctx.Sys;
  const ir::Entity &Accel = *Sys.Accel;
  bool Convolutional =
      Ctx.enumField<ModelFamily>(Model, "family") == ModelFamily::Cnn;
  bool Training =
      Ctx.enumField<WorkloadMode>(W, "mode") == WorkloadMode::Training;
  NodeId Params = Ctx.required(Model, "params", "weight bytes (wall 2)");
  NodeId Bytes = Ctx.required(Precision, "bytes", "bytes per parameter");
  NodeId Peak =
      Ctx.required(Accel, "peak." + Precision.Name,
                   fmt::format("its dense {} peak; the workload runs in {}",
                               Precision.Name, Precision.Name));
  NodeId BW = Ctx.required(Accel, "hbm.bandwidth", "memory bandwidth");
  NodeId Capacity = Ctx.required(Accel, "hbm.capacity", "memory capacity");
  Sys.TDP = Ctx.required(Accel, "tdp", "power draw (wall 18)");
  NodeId Batch = Ctx.orDefault(W, "batch", 1, "default: one sample");
  NodeId EtaMem =
      Ctx.orDefault(W, "memory_efficiency", 1,
                    "default: the full HBM bandwidth", /*Calibrated=*/true);
  std::optional<NodeId> Forward, Eta, Activations;
  if (Convolutional) {
    Forward = Ctx.required(Model, "flops_per_sample",
                           "the forward FLOPs of one sample");
    Eta = Ctx.kernelEfficiency(W, "kernels.conv");
    B.publish(PhaseId::Batch, PM::Efficiency, *Eta);
  } else {
    const char *Why = "the encoder's attention FLOPs";
    NodeId Layers = Ctx.required(Model, "layers", Why);
    NodeId Heads = Ctx.required(Model, "heads", Why);
    NodeId HeadDim = Ctx.required(Model, "head_dim", Why);
    NodeId Seq = Ctx.required(W, "seq", "tokens per encoder sample");
    NodeId Gemm = Ctx.kernelEfficiency(W, "kernels.gemm");
    NodeId Attention = Ctx.kernelEfficiency(W, "kernels.attention");
    if (Training && !Ctx.Failed) {
      NodeId Hidden =
          Ctx.required(Model, "hidden", "the encoder's activations");
      if (!Ctx.Failed)
        Activations = B.apply(FormulaId::TransformerActivationBytes,
                              {Layers, Seq, Batch, Hidden, Heads}, "");
    }
    if (!Ctx.Failed) {
      NodeId AttnDim = B.op(Op::Mul, {Heads, HeadDim});
      Forward = B.apply(FormulaId::EncoderFlopsPerSample,
                        {Params, Layers, AttnDim, Seq}, "flops_per_sample");
      NodeId AttnFlops =
          B.apply(FormulaId::EncoderAttentionFlops, {Layers, AttnDim, Seq},
                  "attention_flops_per_sample");
      Eta = B.apply(FormulaId::BlendedEfficiency,
                    {*Forward, AttnFlops, Gemm, Attention}, "");
      B.publish(PhaseId::Batch, PM::Efficiency, *Eta);
    }
  }
  if (Activations)
    B.publish(MetricId::ActivationsPerDevice, *Activations);
  Ctx.checkPositive(W, "batch");
  std::optional<NodeId> Optimizer;
  if (Training)
    Optimizer = Ctx.orDefault(
        W, "optimizer_bytes", 12,
        "default: mixed-precision Adam keeps an fp32 master copy and two "
        "fp32 moments, 12 bytes per parameter (Rajbhandari et al., ZeRO, "
        "SC 2020)");
  if (Ctx.Failed || !Forward || !Eta)
    return false;
  B.publish(MetricId::Batch, Batch);
  B.publish(MetricId::DeviceMemory, Capacity);

  // Wall 2: capacity.
  NodeId Unit = B.constant(1, "one device per replica");
  NodeId Weights =
      B.apply(FormulaId::WeightBytes, {Params, Bytes, Unit, Unit}, "");
  B.publish(MetricId::WeightsPerDevice, Weights);
  NodeId Memory = Weights, Moved = Weights;
  if (Training) {
    Memory =
        B.apply(FormulaId::TrainingStateBytes, {Params, Bytes, *Optimizer}, "");
    B.publish(MetricId::TrainingStatePerDevice, Memory);
    if (Activations)
      Memory = B.op(Op::Add, {Memory, *Activations});
    Moved =
        B.apply(FormulaId::TrainingStepBytes, {Params, Bytes, *Optimizer}, "");
    B.publish(PhaseId::Batch, PM::Bytes, Moved);
  }
  B.publish(MetricId::MemoryPerDevice, Memory);
  NodeId Fits = B.op(Op::Le, {Memory, Capacity});
  B.publish(MetricId::MemoryFits, Fits);
  B.publish(MetricId::Feasible, Fits);

  // Walls 1-3: the roofline of one batch.
  NodeId PerSample = Training ? B.apply(FormulaId::TrainingFlopsPerSample,
                                        {*Forward}, "training_flops_per_sample")
                              : *Forward;
  NodeId Flops = B.op(Op::Mul, {PerSample, Batch});
  B.publish(PhaseId::Batch, PM::Flops, Flops);
  NodeId Compute = B.apply(FormulaId::ComputeTime, {Flops, Peak, *Eta}, "");
  B.publish(PhaseId::Batch, PM::ComputeTime, Compute);
  NodeId MemoryTime = B.apply(FormulaId::MemoryTime, {Moved, BW, EtaMem}, "");
  B.publish(PhaseId::Batch, PM::MemoryTime, MemoryTime);
  B.publish(PhaseId::Batch, PM::Intensity,
            B.apply(FormulaId::Intensity, {Flops, Moved}, ""));
  B.publish(MetricId::RidgePoint,
            B.apply(FormulaId::RidgePoint, {Peak, BW}, ""));
  NodeId Roof = B.apply(FormulaId::RooflineTime, {Compute, MemoryTime}, "");
  B.publish(PhaseId::Batch, PM::RooflineTime, Roof);

  // Wall 14: data-parallel training all-reduces the gradients over the
  // fabric between the devices (between nodes for a cluster).
  NodeId Comm;
  const ir::Entity *Fabric = !Training || !Sys.Node ? nullptr
                             : Ctx.SystemEntity->Kind == "cluster"
                                 ? Ctx.entity(*Sys.Node, "inter")
                                 : Ctx.entity(*Sys.Node, "intra");
  if (Fabric) {
    NodeId FabricBW =
        Ctx.required(*Fabric, "bandwidth", "the gradient all-reduce");
    NodeId Latency =
        Ctx.required(*Fabric, "latency", "the gradient all-reduce");
    NodeId EtaComm = Ctx.orDefault(W, "comm_efficiency", 1,
                                   "default: the fabric's full bandwidth",
                                   /*Calibrated=*/true);
    if (Ctx.Failed)
      return false;
    Comm = B.apply(FormulaId::RingAllReduceTime,
                   {Weights, Sys.Devices, FabricBW, EtaComm, Latency}, "");
  } else {
    Comm = Ctx.none("s", "0 s",
                    Training ? "no fabric between the devices: no gradient "
                               "all-reduce is modelled"
                             : "inference replicas do not communicate");
  }
  B.publish(PhaseId::Batch, PM::CommTime, Comm);
  NodeId Step = B.apply(FormulaId::StepTime, {Roof, Comm}, "");
  B.publish(MetricId::BatchTime, Step);
  if (Training) {
    B.publish(MetricId::StepTime, Step);
    // Model FLOP utilisation: the model's FLOPs (no recomputation) over the
    // step time at dense peak (Chowdhery et al., PaLM, arXiv 2204.02311,
    // appendix B).
    NodeId Achieved = B.op(Op::Div, {Flops, Step});
    B.publish(MetricId::Mfu, B.op(Op::Div, {Achieved, Peak}));
  }
  NodeId PerDevice = B.apply(FormulaId::SampleThroughput, {Batch, Step}, "");
  B.publish(MetricId::SampleThroughput, PerDevice);
  NodeId Total = B.op(Op::Mul, {PerDevice, Sys.Devices});
  B.publish(MetricId::SystemSampleThroughput, Total);
  NodeId Power = B.apply(FormulaId::SystemPower,
                         {Sys.Devices, Sys.TDP, Sys.Nodes, Sys.Overhead}, "");
  B.publish(MetricId::Power, Power);
  // Wall 18 (part): energy per sample at nameplate power.
  B.publish(MetricId::EnergyPerSample, B.op(Op::Div, {Power, Total}));
  return true;
}

} // namespace mlsc
