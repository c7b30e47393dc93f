//===- ComputeWall.h - Wall 1: compute time and the roofline ------*- C++
//-*-===//
#ifndef MLSC_PASSES_WALLS_COMPUTEWALL_H
#define MLSC_PASSES_WALLS_COMPUTEWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Attention FLOPs of a decode step per device: 2*L*B*ctx*d_attn / tp.
/// Kaplan et al. 2020, Table 1.
q::Flops decodeAttentionFlops(q::Number Layers, q::Number AttnDim,
                              q::Number Batch, q::Tokens Context, q::Number TP);

/// Causal attention FLOPs of a prefill of S tokens per device:
/// L*B*S*(S+1)*d_attn / tp (Kaplan's 2*L*ctx*d_attn summed over 1..S).
q::Flops prefillAttentionFlops(q::Number Layers, q::Number AttnDim,
                               q::Number Batch, q::Tokens Prompt, q::Number TP);

/// Bidirectional attention FLOPs of one encoder sample: 2*L*S^2*d_attn.
q::Flops encoderAttentionFlops(q::Number Layers, q::Number AttnDim,
                               q::Tokens Sequence);

/// Forward FLOPs of one decode step of a dense decoder, per device under
/// tensor parallelism: (2*N*B + 2*L*B*ctx*d_attn) / tp. Kaplan et al. 2020,
/// Table 1 (2N per token for the weights, 2*L*ctx*d_attn for attention).
q::Flops decodeStepFlops(q::Number Params, q::Number Layers, q::Number AttnDim,
                         q::Number Batch, q::Tokens Context, q::Number TP);

/// Forward FLOPs of a prefill of S prompt tokens, per device:
/// (2*N*B*S + L*B*S*(S+1)*d_attn) / tp; causal attention summed over
/// positions 1..S of Kaplan's 2*L*ctx*d_attn.
q::Flops prefillFlops(q::Number Params, q::Number Layers, q::Number AttnDim,
                      q::Number Batch, q::Tokens Prompt, q::Number TP);

/// Forward FLOPs of one encoder sample of S tokens (bidirectional
/// attention over the whole sequence): F = 2*N*S + 2*L*S^2*d_attn. Kaplan
/// et al. 2020, Table 1, with n_ctx = S for every token.
q::Flops encoderFlopsPerSample(q::Number Params, q::Number Layers,
                               q::Number AttnDim, q::Tokens Sequence);

/// Training FLOPs of one sample: forward plus a backward pass of twice
/// the forward (gradients with respect to activations and to weights):
/// F_train = 3 * F_forward. Kaplan et al. 2020, section 2.1.
q::Flops trainingFlopsPerSample(q::Flops Forward);

/// Inverse roofline, memory side: the bandwidth at which moving \p Moved
/// bytes at efficiency eta_mem takes \p Target: BW = M / (T * eta_mem).
/// MLSYSIM, arXiv 2607.02558 (synthesis); Williams et al. 2009.
q::Bandwidth requiredBandwidth(q::Bytes Moved, q::Time Target,
                               q::Number MemoryEfficiency);

/// Inverse roofline, compute side: the peak at which \p Work FLOPs at
/// efficiency eta take \p Target: peak = F / (T * eta).
q::FlopRate requiredPeak(q::Flops Work, q::Time Target, q::Number Efficiency);

/// Samples per second of a batch step: X = B samples / T_step.
q::SampleRate sampleThroughput(q::Number Batch, q::Time Step);

/// Roofline compute time: T = OPs / (peak * eta). Williams et al. 2009.
q::Time computeTime(q::Flops Work, q::FlopRate Peak, q::Number Efficiency);

/// Roofline: T = max(T_compute, T_memory). Williams et al. 2009.
q::Time rooflineTime(q::Time Compute, q::Time Memory);

/// A step's time when its tensor-parallel communication is not overlapped
/// with compute: T = max(T_compute, T_memory) + T_comm.
q::Time stepTime(q::Time Roofline, q::Time Communication);

/// Arithmetic intensity I = FLOPs / bytes moved.
q::Intensity arithmeticIntensity(q::Flops Work, q::Bytes Moved);

/// Ridge point = peak / bandwidth: above it a kernel is compute-bound.
q::Intensity ridgePoint(q::FlopRate Peak, q::Bandwidth BW);

/// Decode throughput of one replica: B tokens per step.
q::TokenRate decodeThroughput(q::Number Batch, q::Time Step);

/// The batch at which a memory-bound decode step turns compute-bound: with
/// per-sequence FLOPs f = (2N + 2*L*ctx*d_attn)/tp and KV bytes
/// m = ctx*kv/tp, B* = W / (f * BW*eta_mem / (peak*eta) - m); +infinity when
/// the KV reads grow faster than the FLOPs (compute never binds). Solves the
/// roofline of Williams et al. 2009 for B.
q::Number decodeCrossoverBatch(q::Number Params, q::Number Layers,
                               q::Number AttnDim, q::Tokens Context,
                               q::Number TP, q::Bytes Weights,
                               q::BytesPerToken KV, q::FlopRate Peak,
                               q::Number Efficiency, q::Bandwidth BW,
                               q::Number MemoryEfficiency);

extern const Formula TrainingFlopsPerSampleF, DecodeCrossoverBatchF, StepTimeF,
    EncoderFlopsPerSampleF, SampleThroughputF;

extern const Formula DecodeStepFlopsF, PrefillFlopsF, ComputeTimeF,
    RooflineTimeF, IntensityF, RidgePointF, DecodeThroughputF;

} // namespace mlsc::walls

#endif
