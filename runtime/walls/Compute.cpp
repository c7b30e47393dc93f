//===- Compute.cpp - Wall 1: compute time and the roofline ----------------===//
//
// FLOP counts of a dense decoder's prefill and decode, the roofline compute
// time T = OPs / (peak * eta), the roofline itself (max of compute and memory
// time), arithmetic intensity and the ridge point. Known answers:
// test/unit/WallsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <limits>

namespace mlsc::walls {

using namespace q;

Flops decodeStepFlops(Number Params, Number Layers, Number AttnDim,
                      Number Batch, Tokens Context, Number TP) {
  Flops Weights = TwoPerToken * Params * Batch * OneToken;
  return Weights / TP +
         decodeAttentionFlops(Layers, AttnDim, Batch, Context, TP);
}

Flops prefillFlops(Number Params, Number Layers, Number AttnDim, Number Batch,
                   Tokens Prompt, Number TP) {
  Flops Weights = TwoPerToken * Params * Batch * Prompt;
  return Weights / TP +
         prefillAttentionFlops(Layers, AttnDim, Batch, Prompt, TP);
}

Number mlaDecodeAttentionDim(Number Heads, Number KVRank, Number RopeDim) {
  return Heads * (KVRank + RopeDim + KVRank) / 2.0;
}

Number mlaPrefillAttentionDim(Number Heads, Number HeadDim, Number RopeDim,
                              Number VHeadDim) {
  return Heads * (HeadDim + RopeDim + VHeadDim) / 2.0;
}

Flops encoderFlopsPerSample(Number Params, Number Layers, Number AttnDim,
                            Tokens Sequence) {
  return TwoPerToken * Params * Sequence +
         encoderAttentionFlops(Layers, AttnDim, Sequence);
}

Flops trainingFlopsPerSample(Flops Forward) { return 3.0 * Forward; }

Bandwidth requiredBandwidth(Bytes Moved, Time Target, Number MemoryEfficiency) {
  return Moved / (Target * MemoryEfficiency);
}

FlopRate requiredPeak(Flops Work, Time Target, Number Efficiency) {
  return Work / (Target * Efficiency);
}

SampleRate sampleThroughput(Number Batch, Time Step) {
  return Batch * in<Samples>(1) / Step;
}

Time computeTime(Flops Work, FlopRate Peak, Number Efficiency) {
  return Work / (Peak * Efficiency);
}

Time rooflineTime(Time Compute, Time Memory) {
  return std::max(Compute, Memory);
}

Time kernelClassRooflineTime(Time GemmCompute, Time WeightRead,
                             Time AttentionCompute, Time KVTraffic,
                             Number Overlap) {
  const Number Apart = 1.0 - Overlap;
  return std::max(GemmCompute + Apart * WeightRead,
                  WeightRead + Apart * GemmCompute) +
         std::max(AttentionCompute, KVTraffic);
}

Time stepTime(Time Roofline, Time Communication) {
  return Roofline + Communication;
}

Intensity arithmeticIntensity(Flops Work, Bytes Moved) { return Work / Moved; }

Intensity ridgePoint(FlopRate Peak, Bandwidth BW) { return Peak / BW; }

TokenRate decodeThroughput(Number Batch, Time Step) {
  return Batch * OneToken / Step;
}

Number decodeCrossoverBatch(Number Params, Number Layers, Number AttnDim,
                            Tokens Context, Number TP, Bytes Weights,
                            BytesPerToken KV, Number KVShards, FlopRate Peak,
                            Number Efficiency, Bandwidth BW,
                            Number MemoryEfficiency) {
  Flops PerSequence =
      decodeStepFlops(Params, Layers, AttnDim, in<Number>(1), Context, TP);
  Bytes KVPerSequence = Context * KV / KVShards;
  Bytes Denominator =
      PerSequence * (BW * MemoryEfficiency) / (Peak * Efficiency) -
      KVPerSequence;
  if (Denominator.value() <= 0)
    return in<Number>(std::numeric_limits<double>::infinity());
  return Weights / Denominator;
}

Flops megatronIterationFlops(Number Batch, Tokens Sequence, Number Layers,
                             Number Hidden, Number Vocab, Number Passes) {
  double B = Batch.value(), S = (Sequence / OneToken).value(),
         L = Layers.value(), H = Hidden.value(), V = Vocab.value();
  return in<Flops>(24 * Passes.value() * B * S * L * H * H *
                   (1 + S / (6 * H) + V / (16 * L * H)));
}

Number pipelineBubbleFraction(Number Stages, Number MicroBatches,
                              Number VirtualStages) {
  return (Stages - in<Number>(1)) / (VirtualStages * MicroBatches);
}

Time trainingTime(Tokens Trained, Number Params, Number Devices,
                  FlopRate PerDevice, Number Passes) {
  // 2 FLOPs a parameter a token for every pass over the weights.
  Flops Work = in<Flops>(2 * Passes.value() * (Trained / OneToken).value() *
                         Params.value());
  return Work / (Devices * PerDevice);
}

Number decoderLayerParams(Number Hidden, Number AttnDim, Number KVDim,
                          Number FFN, Number FFNMatrices) {
  return 2.0 * Hidden * AttnDim + 2.0 * Hidden * KVDim +
         FFNMatrices * Hidden * FFN;
}

FlopsPerToken trainingModelFlopsPerToken(Number Layers, Number LayerParams,
                                         Tokens Sequence, Number AttnDim,
                                         Number Hidden, Number Vocab) {
  Number S = Sequence / OneToken;
  Number Forward = 2.0 * Layers * LayerParams + 4.0 * Layers * S * AttnDim +
                   2.0 * Hidden * Vocab;
  return 3.0 * Forward * in<Flops>(1) / OneToken;
}

FlopsPerToken recomputeFlopsPerToken(Number Layers, Number LayerParams,
                                     Tokens Sequence, Number AttnDim,
                                     Number Recompute) {
  Number S = Sequence / OneToken;
  Number Attention = 4.0 * Layers * S * AttnDim;
  Number Extra = Recompute.value() >= 2 ? 2.0 * Layers * LayerParams + Attention
                 : Recompute.value() >= 1 ? Attention
                                          : in<Number>(0);
  return Extra * in<Flops>(1) / OneToken;
}

Flops trainingStageGemmFlops(Tokens MicroBatchTokens, Number StageLayers,
                             Number LayerParams, Number Hidden, Number Vocab,
                             Number OutputLayer, Number Recompute, Number TP) {
  double PerLayer = Recompute.value() >= 2 ? 8 : 6;
  Number PerToken =
      PerLayer * StageLayers * LayerParams + 6.0 * OutputLayer * Hidden * Vocab;
  return MicroBatchTokens / OneToken * PerToken / TP * in<Flops>(1);
}

Flops trainingStageAttentionFlops(Tokens MicroBatchTokens, Number StageLayers,
                                  Tokens Sequence, Number AttnDim,
                                  Number Recompute, Number Fused, Number TP) {
  double PerLayer = Recompute.value() >= 1 ? 16 : 12;
  double Causal = Fused.value() != 0 ? 2 : 1;
  Number PerToken =
      PerLayer * StageLayers * (Sequence / OneToken) * AttnDim / Causal;
  return MicroBatchTokens / OneToken * PerToken / TP * in<Flops>(1);
}

Time pipelineStepTime(Number MicroBatches, Number Stages, Number VirtualStages,
                      Time MicroBatchTime) {
  return (MicroBatches + (Stages - 1.0) / VirtualStages) * MicroBatchTime;
}

Number flopUtilisation(Flops StepFlops, Time Step, Number Devices,
                       FlopRate Peak) {
  return StepFlops / (Step * Devices * Peak);
}

Time timeToTrain(Tokens Trained, TokenRate Throughput) {
  return Trained / Throughput;
}

Number mlaAttentionParams(Number Hidden, Number Heads, Number HeadDim,
                          Number RopeDim, Number VHeadDim, Number QRank,
                          Number KVRank) {
  return Hidden * QRank + QRank * Heads * (HeadDim + RopeDim) +
         Hidden * (KVRank + RopeDim) + KVRank * Heads * (HeadDim + VHeadDim) +
         Heads * VHeadDim * Hidden;
}

Number moeLayerAverage(Number Layers, Number DenseLayers, Number DenseValue,
                       Number MoeValue) {
  return (DenseLayers * DenseValue + (Layers - DenseLayers) * MoeValue) /
         Layers;
}

} // namespace mlsc::walls
