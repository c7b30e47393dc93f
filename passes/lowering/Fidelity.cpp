//===- Fidelity.cpp - Wall 13: what quantization and pruning buy ----------===//
//
// The accuracy cost of a precision is a sourced leaf. Weight-only
// quantization and pruning: the decode step against the same step with
// dense weights at the math precision. A compute-bound step gains only from
// structured sparsity on sparse tensor cores (the math precision, so the
// peak, is unchanged).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;
using PM = PhaseMetricId;

bool lowerFidelity(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  const ir::Entity &W = *Ctx.Workload;
  if (std::optional<NodeId> Delta = Ctx.field(W, "accuracy_delta"))
    B.publish(MetricId::AccuracyDelta,
              B.apply(FormulaId::AccuracyDelta, {*Delta}, ""));
  if ((!Ctx.entity(W, "weight_precision") && !D.GemmFactor) ||
      D.Machine.InjectBW)
    return true;
  // The weights the step reads (all of them, or an MoE step's experts,
  // across the pipeline's stages), scaled to the math precision as it is
  // stored (with a block-scaled format's scales).
  NodeId Read = D.DecodeWeights;
  NodeId MathStored = Ctx.storageBytes(*Ctx.Precision, "bytes per parameter");
  NodeId Baseline =
      B.op(Op::Mul, {Read, B.op(Op::Div, {MathStored, D.WeightBytes})});
  B.label(Baseline, "fidelity.baseline_weight_bytes");
  NodeId BaselineBytes =
      B.apply(FormulaId::DecodeStepBytes,
              {Baseline, D.KV, D.MicroBatch, D.Context, D.KVShards},
              "fidelity.baseline_decode_bytes");
  NodeId ComputeBound = B.op(Op::Ge, {G.get(PhaseId::Decode, PM::ComputeTime),
                                      G.get(PhaseId::Decode, PM::MemoryTime)});
  // Structured sparsity raises the effective peak of a compute-bound step.
  NodeId Peak = D.GemmFactor ? B.op(Op::Div, {D.Peak, *D.GemmFactor}) : D.Peak;
  B.publish(MetricId::FidelityDecodeSpeedup,
            B.apply(FormulaId::QuantizationSpeedup,
                    {BaselineBytes, G.get(PhaseId::Decode, PM::Bytes), D.Peak,
                     Peak, ComputeBound},
                    ""));
  return true;
}

} // namespace mlsc
