//===- Memory.cpp - Wall 2: bytes moved and memory capacity ---------------===//
//
// Weight and KV-cache bytes per device, bytes moved by prefill and decode,
// the roofline memory time T = bytes / BW, and the capacity check
// weights + KV cache + activations <= device memory; the KV cache of
// multi-head latent attention, and the expert weights an MoE step reads.
// Known answers: test/unit/WallsTest.cpp, test/unit/EfficiencyTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cmath>

namespace mlsc::walls {

using namespace q;

Bytes weightBytesPerDevice(Number Params, Bytes BytesPerParam, Number TP,
                           Number PP) {
  return Params * BytesPerParam / (TP * PP);
}

Bytes weightBytesPerRank(Number Params, Bytes BytesPerParam, Number TP) {
  return Params * BytesPerParam / TP;
}

BytesPerToken kvBytesPerToken(Number Layers, Number KVHeads, Number HeadDim,
                              Bytes BytesPerElem) {
  return 2.0 * Layers * KVHeads * HeadDim * BytesPerElem / OneToken;
}

BytesPerToken mlaKVBytesPerToken(Number Layers, Number KVRank, Number RopeDim,
                                 Bytes BytesPerElem) {
  return Layers * (KVRank + RopeDim) * BytesPerElem / OneToken;
}

Bytes moeWeightBytesRead(Number Params, Number ActiveParams, Number Experts,
                         Number TopK, Tokens Routed, Bytes BytesPerParam,
                         Number Shards, Number EP) {
  Number PerExpert = (Params - ActiveParams) / (Experts - TopK);
  Number AlwaysActive = Params - Experts * PerExpert;
  double Missed =
      std::pow(1.0 - (TopK / Experts).value(), (Routed / OneToken).value());
  Number Touched = Experts / EP * (1.0 - Missed);
  return (AlwaysActive + Touched * PerExpert) * BytesPerParam / Shards;
}

Bytes moeWeightBytesPerDevice(Number Params, Number ActiveParams,
                              Number Experts, Number TopK, Bytes BytesPerParam,
                              Number Shards, Number EP) {
  Number PerExpert = (Params - ActiveParams) / (Experts - TopK);
  Number AlwaysActive = Params - Experts * PerExpert;
  return (AlwaysActive + Experts * PerExpert / EP) * BytesPerParam / Shards;
}

Bytes inferenceActivationBytes(Tokens PassTokens, Number Hidden, Number FFN,
                               Number TP, Bytes BytesPerElem) {
  return PassTokens / OneToken * (2.0 * Hidden + 2.0 * FFN / TP) * BytesPerElem;
}

Bytes attentionScoreBytes(Number Batch, Number Heads, Tokens Prompt, Number TP,
                          Bytes BytesPerElem) {
  Number S = Prompt / OneToken;
  return Batch * Heads / TP * S * S * BytesPerElem;
}

Bytes trainingStateBytes(Number Params, Bytes BytesPerParam,
                         Bytes OptimizerBytesPerParam) {
  return Params * (2.0 * BytesPerParam + OptimizerBytesPerParam);
}

Bytes trainingStepBytes(Number Params, Bytes BytesPerParam,
                        Bytes OptimizerBytesPerParam) {
  return Params * (4.0 * BytesPerParam + 2.0 * OptimizerBytesPerParam);
}

Bytes transformerActivationBytes(Number Layers, Tokens Sequence, Number Batch,
                                 Number Hidden, Number Heads) {
  Number S = Sequence / OneToken;
  return Layers * S * Batch * Hidden * (34.0 + 5.0 * Heads * S / Hidden) *
         in<Bytes>(1.0);
}

Bytes decodeStepBytes(Bytes Weights, BytesPerToken KV, Number Batch,
                      Tokens Context, Number TP) {
  return Weights + Batch * Context * KV / TP;
}

Bytes prefillBytes(Bytes Weights, BytesPerToken KV, Number Batch, Tokens Prompt,
                   Number TP) {
  return Weights + Batch * Prompt * KV / TP;
}

Time memoryTime(Bytes Moved, Bandwidth BW, Number Efficiency) {
  return Moved / (BW * Efficiency);
}

Number trainingStageParams(Number StageLayers, Number LayerParams,
                           Number Hidden, Number Vocab, Number Tables,
                           Number TP) {
  return (StageLayers * LayerParams + Tables * Vocab * Hidden) / TP;
}

Bytes zeroShardedBytes(Number Params, Bytes BytesPerParam, Number DP,
                       Number Stage, Number ShardedFrom) {
  Number Shards = Stage.value() >= ShardedFrom.value() ? DP : in<Number>(1);
  return Params * BytesPerParam / Shards;
}

Bytes trainingLayerActivationBytes(Tokens Sequence, Number MicroBatch,
                                   Number Hidden, Number Heads, Number AttnDim,
                                   Number KVDim, Number FFN, Number FFNInner,
                                   Bytes ActivationBytes, Number TP,
                                   Number SequenceParallel, Number Recompute,
                                   Number Fused, Number Dropout) {
  Number S = Sequence / OneToken;
  Number TSp = SequenceParallel.value() != 0 ? TP : in<Number>(1);
  Bytes Tokens = S * MicroBatch * Hidden * in<Bytes>(1);
  double Act = ActivationBytes.value();
  if (Recompute.value() >= 2)
    return Act * Tokens / TSp;
  double R = 4 * Act + (Dropout.value() != 0 ? 2 : 0);
  Number Split = Act * (2.0 * AttnDim + 2.0 * KVDim + FFNInner * FFN) / Hidden;
  Bytes Layer = Tokens * (R / TSp + Split / TP);
  // The scores: the softmax output, and with dropout its mask and output.
  double Scores = Act + (Dropout.value() != 0 ? 1 + Act : 0);
  if (Fused.value() == 0 && Recompute.value() < 1)
    Layer += Scores * Heads * S * S * MicroBatch / TP * in<Bytes>(1);
  return Layer;
}

Number microBatchesInFlight(Number Stages, Number MicroBatches,
                            Number VirtualStages, Number Group) {
  double P = Stages.value(), V = VirtualStages.value(),
         M = MicroBatches.value();
  if (V <= 1)
    return in<Number>(std::min(M, P));
  double Chunks = 2 * (P - 1) + (V - 1) * Group.value() + 1;
  return in<Number>(std::min(M, Chunks / V));
}

Bytes outputLayerActivationBytes(Tokens Sequence, Number MicroBatch,
                                 Number Hidden, Number Vocab, Number TP) {
  Number S = Sequence / OneToken;
  return 4.0 * S * MicroBatch * Hidden * (1.0 + Vocab / Hidden) / TP *
         in<Bytes>(1);
}

BytesPerToken elementwiseBytesPerToken(Number Hidden, Number FFN,
                                       Number ActivationInputs,
                                       Bytes ActivationBytes, Number TP,
                                       Number SequenceParallel, Number Passes) {
  Number TSp = SequenceParallel.value() != 0 ? TP : in<Number>(1);
  Bytes PerPass = ActivationBytes *
                  (10.0 * Hidden / TSp + (ActivationInputs + 1.0) * FFN / TP);
  return Passes * PerPass / OneToken;
}

Bytes optimizerStepBytes(Number Params, Bytes WeightBytes, Bytes GradientBytes,
                         Bytes OptimizerBytesPerParam) {
  return Params * (GradientBytes + 2.0 * OptimizerBytesPerParam + WeightBytes);
}

Bytes crossEntropyBytes(Tokens MicroBatchTokens, Number Vocab, Number TP) {
  // Forward: cast 2 + 4, max 4, subtract 8, exp 8, sum 4, normalise 8;
  // backward: scale 8, cast back 4 + 2.
  constexpr double PerLogit = 6 + 4 + 8 + 8 + 4 + 8 + 8 + 6;
  return PerLogit * (MicroBatchTokens / OneToken) * Vocab / TP * in<Bytes>(1);
}

Bytes unfusedScoreBytes(Number MicroBatch, Tokens Sequence, Number Heads,
                        Number StageLayers, Bytes ActivationBytes,
                        Number Dropout, Number TP) {
  Number S = Sequence / OneToken;
  double Act = ActivationBytes.value();
  double PerScore = 3 * (4 * Act + (Dropout.value() != 0 ? 1 + 2 * Act : 0));
  return PerScore * Heads / TP * S * S * MicroBatch * StageLayers *
         in<Bytes>(1);
}

BytesPerToken fp8CastBytesPerToken(Number Hidden, Number AttnDim, Number KVDim,
                                   Number FFN, Number FFNInner, Number TP,
                                   Number SequenceParallel) {
  Number TSp = SequenceParallel.value() != 0 ? TP : in<Number>(1);
  // Forward: the QKV and FC1 inputs (h each) and the projection's and
  // FC2's inputs (d_attn, f); backward: the output gradients of QKV, the
  // projection (h), FC1 (m_f f) and FC2 (h).
  Number Forward = 2.0 * Hidden / TSp + (AttnDim + FFN) / TP;
  Number Backward =
      2.0 * Hidden / TSp + (AttnDim + 2.0 * KVDim + FFNInner * FFN) / TP;
  return 3.0 * (Forward + Backward) * in<Bytes>(1) / OneToken;
}

} // namespace mlsc::walls
