//===- LowerPerSample.cpp - CNN and encoder inference and training --------===//
//
// Part of lower-to-graph (ScenarioLowering.h). Each device runs whole
// batches of `batch` samples (data parallel). Inference: a batch reads the
// weights once and does B samples' forward FLOPs. Training: 3x the forward
// FLOPs, weights + gradients + optimizer state (+ an encoder's activations)
// in memory, the parameters' traffic, and a ring all-reduce of the
// gradients across the devices, not overlapped. A CNN's activation memory
// and traffic are not counted (docs/walls.md says so).
//
//===----------------------------------------------------------------------===//

#include "passes/ScenarioLowering.h"
#include "runtime/walls/Formulas.h"

#include <fmt/format.h>

namespace mlsc {

using graph::Op;

void ScenarioLowering::perSample(const ir::Entity &W, const ir::Entity &Model,
                                 const ir::Entity &Precision, const System &Sys,
                                 bool Convolutional, bool Training) {
  const Dimension One;
  const Dimension Data = unit("B");
  const ir::Entity &Accel = *Sys.Accel;
  uint32_t Params = required(Model, "params", "weight bytes (wall 2)");
  uint32_t Bytes = required(Precision, "bytes", "bytes per parameter");
  uint32_t Peak =
      required(Accel, "peak." + Precision.Name,
               fmt::format("its dense {} peak; the workload runs in {}",
                           Precision.Name, Precision.Name));
  uint32_t BW = required(Accel, "hbm.bandwidth", "memory bandwidth");
  uint32_t Capacity = required(Accel, "hbm.capacity", "memory capacity");
  uint32_t TDP = required(Accel, "tdp", "power draw (wall 18)");
  uint32_t Batch = orDefault(W, "batch", 1, One, "default: one sample");
  uint32_t EtaMem = orDefault(W, "memory_efficiency", 1, One,
                              "default: the full HBM bandwidth",
                              /*Calibrated=*/true);
  std::optional<uint32_t> Forward, Eta, Activations;
  if (Convolutional) {
    Forward =
        required(Model, "flops_per_sample", "the forward FLOPs of one sample");
    Eta = kernelEfficiency(W, "kernels.conv");
    B.name(*Eta, "batch.efficiency");
  } else {
    const char *Why = "the encoder's attention FLOPs";
    uint32_t Layers = required(Model, "layers", Why);
    uint32_t Heads = required(Model, "heads", Why);
    uint32_t HeadDim = required(Model, "head_dim", Why);
    uint32_t Seq = required(W, "seq", "tokens per encoder sample");
    uint32_t Gemm = kernelEfficiency(W, "kernels.gemm");
    uint32_t Attention = kernelEfficiency(W, "kernels.attention");
    if (Training && !Failed) {
      uint32_t Hidden = required(Model, "hidden", "the encoder's activations");
      if (!Failed)
        Activations = B.apply(FormulaId::TransformerActivationBytes,
                              {Layers, Seq, Batch, Hidden, Heads},
                              "activations_per_device");
    }
    if (!Failed) {
      uint32_t AttnDim = B.op(Op::Mul, {Heads, HeadDim}, One);
      Forward = B.apply(FormulaId::EncoderFlopsPerSample,
                        {Params, Layers, AttnDim, Seq}, "flops_per_sample");
      uint32_t AttnFlops =
          B.apply(FormulaId::EncoderAttentionFlops, {Layers, AttnDim, Seq},
                  "attention_flops_per_sample");
      Eta = B.apply(FormulaId::BlendedEfficiency,
                    {*Forward, AttnFlops, Gemm, Attention}, "batch.efficiency");
    }
  }
  checkPositive(W, "batch");
  std::optional<uint32_t> Optimizer;
  if (Training)
    Optimizer = orDefault(
        W, "optimizer_bytes", 12, Data,
        "default: mixed-precision Adam keeps an fp32 master copy and two "
        "fp32 moments, 12 bytes per parameter (Rajbhandari et al., ZeRO, "
        "SC 2020)");
  if (Failed || !Forward || !Eta)
    return;
  B.name(Batch, "batch");
  B.name(Capacity, "device_memory");

  // Wall 2: capacity.
  uint32_t Unit = B.constant(1, "one device per replica");
  uint32_t Weights = B.apply(FormulaId::WeightBytes,
                             {Params, Bytes, Unit, Unit}, "weights_per_device");
  uint32_t Memory = Weights, Moved = Weights;
  if (Training) {
    Memory = B.apply(FormulaId::TrainingStateBytes, {Params, Bytes, *Optimizer},
                     "training_state_per_device");
    if (Activations)
      Memory = B.op(Op::Add, {Memory, *Activations}, Data);
    Moved = B.apply(FormulaId::TrainingStepBytes, {Params, Bytes, *Optimizer},
                    "batch.bytes");
  }
  B.name(Memory, "memory_per_device");
  uint32_t Fits = B.op(Op::Le, {Memory, Capacity}, One, true);
  B.name(Fits, "memory_fits");
  B.name(Fits, "feasible");

  // Walls 1-3: the roofline of one batch.
  uint32_t PerSample = Training
                           ? B.apply(FormulaId::TrainingFlopsPerSample,
                                     {*Forward}, "training_flops_per_sample")
                           : *Forward;
  uint32_t Flops = B.op(Op::Mul, {PerSample, Batch}, G.Nodes[PerSample].Dim);
  B.name(Flops, "batch.flops");
  uint32_t Compute = B.apply(FormulaId::ComputeTime, {Flops, Peak, *Eta},
                             "batch.compute_time");
  uint32_t MemoryTime =
      B.apply(FormulaId::MemoryTime, {Moved, BW, EtaMem}, "batch.memory_time");
  B.apply(FormulaId::Intensity, {Flops, Moved}, "batch.intensity");
  B.apply(FormulaId::RidgePoint, {Peak, BW}, "ridge_point");
  uint32_t Roof = B.apply(FormulaId::RooflineTime, {Compute, MemoryTime},
                          "batch.roofline_time");

  // Wall 14: data-parallel training all-reduces the gradients over the
  // fabric between the devices (between nodes for a cluster).
  const Dimension Second = unit("s");
  uint32_t Comm = 0;
  const ir::Entity *Fabric =
      !Training || !Sys.Node ? nullptr
      : S.field("system") && entity(S, "system")->Kind == "cluster"
          ? entity(*Sys.Node, "inter")
          : entity(*Sys.Node, "intra");
  if (Fabric) {
    uint32_t FabricBW =
        required(*Fabric, "bandwidth", "the gradient all-reduce");
    uint32_t Latency = required(*Fabric, "latency", "the gradient all-reduce");
    uint32_t EtaComm = orDefault(W, "comm_efficiency", 1, One,
                                 "default: the fabric's full bandwidth",
                                 /*Calibrated=*/true);
    if (Failed)
      return;
    Comm = B.apply(FormulaId::RingAllReduceTime,
                   {Weights, Sys.Devices, FabricBW, EtaComm, Latency},
                   "batch.comm_time");
  } else {
    Comm = none(Second, "0 s",
                Training ? "no fabric between the devices: no gradient "
                           "all-reduce is modelled"
                         : "inference replicas do not communicate");
    B.name(Comm, "batch.comm_time");
  }
  uint32_t Step = B.apply(FormulaId::StepTime, {Roof, Comm}, "batch_time");
  if (Training) {
    B.name(Step, "step_time");
    // Model FLOP utilisation: the model's FLOPs (no recomputation) over the
    // step time at dense peak (Chowdhery et al., PaLM, arXiv 2204.02311,
    // appendix B).
    uint32_t Achieved = B.op(Op::Div, {Flops, Step}, G.Nodes[Peak].Dim);
    uint32_t Mfu = B.op(Op::Div, {Achieved, Peak}, One);
    B.name(Mfu, "mfu");
  }
  uint32_t PerDevice =
      B.apply(FormulaId::SampleThroughput, {Batch, Step}, "sample_throughput");
  uint32_t Total =
      B.op(Op::Mul, {PerDevice, Sys.Devices}, G.Nodes[PerDevice].Dim);
  B.name(Total, "system_sample_throughput");
  uint32_t Power =
      B.apply(FormulaId::SystemPower,
              {Sys.Devices, TDP, Sys.Nodes, Sys.Overhead}, "power");
  // Wall 18 (part): energy per sample at nameplate power.
  uint32_t Energy = B.op(Op::Div, {Power, Total}, unit("J/sample"));
  B.name(Energy, "energy_per_sample");
}

} // namespace mlsc
