//===- ComputeWall.cpp - Wall 1: compute time and the roofline ------------===//
//
// FLOP counts of a dense decoder's prefill and decode, the roofline compute
// time T = OPs / (peak * eta), the roofline itself (max of compute and memory
// time), arithmetic intensity and the ridge point. Known answers:
// test/unit/WallsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/walls/ComputeWall.h"
#include "passes/walls/Formula.h"

#include <algorithm>
#include <limits>

namespace mlsc::walls {

using namespace q;

namespace {
/// Two FLOPs (a multiply and an add) per parameter per token.
const FlopsPerToken TwoPerToken = in<FlopsPerToken>(2.0);
const Tokens OneToken = in<Tokens>(1.0);
} // namespace

Flops decodeAttentionFlops(Number Layers, Number AttnDim, Number Batch,
                           Tokens Context, Number TP) {
  return TwoPerToken * Layers * (Context / OneToken) * AttnDim * Batch *
         OneToken / TP;
}

Flops prefillAttentionFlops(Number Layers, Number AttnDim, Number Batch,
                            Tokens Prompt, Number TP) {
  Number S = Prompt / OneToken;
  return TwoPerToken * OneToken * Layers * Batch * S * (S + 1.0) * AttnDim /
         2.0 / TP;
}

Flops encoderAttentionFlops(Number Layers, Number AttnDim, Tokens Sequence) {
  Number S = Sequence / OneToken;
  return TwoPerToken * OneToken * Layers * S * S * AttnDim;
}

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
                            BytesPerToken KV, FlopRate Peak, Number Efficiency,
                            Bandwidth BW, Number MemoryEfficiency) {
  Flops PerSequence =
      decodeStepFlops(Params, Layers, AttnDim, in<Number>(1), Context, TP);
  Bytes KVPerSequence = Context * KV / TP;
  Bytes Denominator =
      PerSequence * (BW * MemoryEfficiency) / (Peak * Efficiency) -
      KVPerSequence;
  if (Denominator.value() <= 0)
    return in<Number>(std::numeric_limits<double>::infinity());
  return Weights / Denominator;
}

const Formula DecodeCrossoverBatchF = makeFormula<&decodeCrossoverBatch>(
    "decode_crossover_batch", Wall::Compute,
    "B* = W / (f * BW*eta_mem / (peak*eta) - m)",
    "the roofline (Williams et al., CACM 2009) solved for the batch");

const Formula EncoderFlopsPerSampleF = makeFormula<&encoderFlopsPerSample>(
    "encoder_flops_per_sample", Wall::Compute, "F = 2*N*S + 2*L*S^2*d_attn",
    "Kaplan et al. 2020, Table 1 (every token attends to all S)");
const Formula TrainingFlopsPerSampleF = makeFormula<&trainingFlopsPerSample>(
    "training_flops_per_sample", Wall::Compute, "F_train = 3 * F_forward",
    "Kaplan et al. 2020, section 2.1 (backward = 2 x forward)");
const Formula SampleThroughputF = makeFormula<&sampleThroughput>(
    "sample_throughput", Wall::Compute, "X = B samples / T_step", "definition");

const Formula StepTimeF = makeFormula<&stepTime>(
    "step_time", Wall::Compute, "T = max(T_compute, T_memory) + T_comm",
    "roofline plus tensor-parallel communication, not overlapped "
    "(Megatron-LM inference)");

const Formula DecodeStepFlopsF = makeFormula<&decodeStepFlops>(
    "decode_step_flops", Wall::Compute, "F = (2*N*B + 2*L*B*ctx*d_attn) / tp",
    "Kaplan et al. 2020, Scaling Laws, Table 1");
const Formula PrefillFlopsF = makeFormula<&prefillFlops>(
    "prefill_flops", Wall::Compute, "F = (2*N*B*S + L*B*S*(S+1)*d_attn) / tp",
    "Kaplan et al. 2020, Table 1, summed over causal positions");
const Formula ComputeTimeF = makeFormula<&computeTime>(
    "compute_time", Wall::Compute, "T = F / (peak * eta)",
    "Williams, Waterman, Patterson, Roofline, CACM 2009");
const Formula RooflineTimeF = makeFormula<&rooflineTime>(
    "roofline_time", Wall::Compute, "T = max(T_compute, T_memory)",
    "Williams, Waterman, Patterson, Roofline, CACM 2009");
const Formula IntensityF = makeFormula<&arithmeticIntensity>(
    "arithmetic_intensity", Wall::Compute, "I = F / bytes",
    "Williams, Waterman, Patterson, Roofline, CACM 2009");
const Formula RidgePointF = makeFormula<&ridgePoint>(
    "ridge_point", Wall::Compute, "I_ridge = peak / BW",
    "Williams, Waterman, Patterson, Roofline, CACM 2009");
const Formula DecodeThroughputF = makeFormula<&decodeThroughput>(
    "decode_throughput", Wall::Compute, "X = B tokens / T_step", "definition");

} // namespace mlsc::walls
