//===- MemoryWall.h - Wall 2: bytes moved and memory capacity ----*- C++
//-*-===//
#ifndef MLSC_PASSES_WALLS_MEMORYWALL_H
#define MLSC_PASSES_WALLS_MEMORYWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Weight bytes per device: N * bytes_per_param / (tp * pp).
q::Bytes weightBytesPerDevice(q::Number Params, q::Bytes BytesPerParam,
                              q::Number TP, q::Number PP);

/// KV-cache bytes per token: 2 * layers * kv_heads * head_dim * bytes
/// (keys and values). Llama-3-70B in bf16: 320 KiB.
q::BytesPerToken kvBytesPerToken(q::Number Layers, q::Number KVHeads,
                                 q::Number HeadDim, q::Bytes BytesPerElem);

/// Bytes read by one decode step per device: every weight once, plus the
/// KV cache of B sequences at context ctx: W + B*ctx*kv / tp.
q::Bytes decodeStepBytes(q::Bytes Weights, q::BytesPerToken KV, q::Number Batch,
                         q::Tokens Context, q::Number TP);

/// Bytes moved by a prefill per device: weights read once, KV written:
/// W + B*S*kv / tp.
q::Bytes prefillBytes(q::Bytes Weights, q::BytesPerToken KV, q::Number Batch,
                      q::Tokens Prompt, q::Number TP);

/// Roofline memory time: T = bytes / (BW * eta_mem).
q::Time memoryTime(q::Bytes Moved, q::Bandwidth BW, q::Number Efficiency);

/// Memory needed per device: weights + the KV cache of B full sequences.
q::Bytes memoryPerDevice(q::Bytes Weights, q::BytesPerToken KV, q::Number Batch,
                         q::Tokens Sequence, q::Number TP);

/// KV-cache bytes per token under multi-head latent attention, which caches
/// one compressed latent and one decoupled rotary key per layer:
/// kv = L * (kv_rank + rope_dim) * bytes. DeepSeek-V2, arXiv 2405.04434, 2.1.
q::BytesPerToken mlaKVBytesPerToken(q::Number Layers, q::Number KVRank,
                                    q::Number RopeDim, q::Bytes BytesPerElem);

/// Weight bytes an MoE forward pass over T tokens reads per device. With
/// N total and A active parameters, E experts and top-k routing, one
/// expert (over all MoE layers) has P_e = (N - A) / (E - k) parameters and
/// the always-active rest is N - E * P_e. Under uniform, independent routing
/// an expert is missed by one token with probability 1 - k/E, so a device
/// holding E/ep of the experts (expert parallelism) touches
/// (E/ep) * (1 - (1 - k/E)^T) of them:
/// W = ((N - E*P_e) + (E/ep)*(1 - (1 - k/E)^T) * P_e) * bytes / shards,
/// shards = tp * pp.
q::Bytes moeWeightBytesRead(q::Number Params, q::Number ActiveParams,
                            q::Number Experts, q::Number TopK, q::Tokens Routed,
                            q::Bytes BytesPerParam, q::Number Shards,
                            q::Number EP);

/// MoE weights stored per device: the always-active parameters sharded by
/// tp * pp, the experts by tp * pp * ep (Lepikhin et al., GShard, 2020;
/// Rajbhandari et al., DeepSpeed-MoE, ICML 2022):
/// W = ((N - E*P_e) + E*P_e/ep) * bytes / (tp * pp).
q::Bytes moeWeightBytesPerDevice(q::Number Params, q::Number ActiveParams,
                                 q::Number Experts, q::Number TopK,
                                 q::Bytes BytesPerParam, q::Number Shards,
                                 q::Number EP);

/// Activation working set of one inference forward pass over T tokens, per
/// device: the layer input and residual (2*h) and the FFN's two intermediate
/// projections (2*ffn/tp), kept for one layer at a time:
/// A = T * (2*h + 2*ffn/tp) * bytes. vLLM sizes the same quantity by a
/// profiling pass (Kwon et al., SOSP 2023); this is its analytic estimate.
q::Bytes inferenceActivationBytes(q::Tokens PassTokens, q::Number Hidden,
                                  q::Number FFN, q::Number TP,
                                  q::Bytes BytesPerElem);

/// Unfused attention writes each sequence's S x S scores per head:
/// A = B * (heads/tp) * S^2 * bytes (fused kernels keep them on chip; Dao
/// et al., FlashAttention, NeurIPS 2022).
q::Bytes attentionScoreBytes(q::Number Batch, q::Number Heads, q::Tokens Prompt,
                             q::Number TP, q::Bytes BytesPerElem);

/// Training state per device, mixed precision with Adam: weights and
/// gradients at b bytes each plus the optimizer's bytes per parameter
/// (fp32 master copy and two moments: 12): S = N * (2*b + opt).
/// Rajbhandari et al., ZeRO, SC 2020, section 3.1 (16 bytes per parameter).
q::Bytes trainingStateBytes(q::Number Params, q::Bytes BytesPerParam,
                            q::Bytes OptimizerBytesPerParam);

/// Memory traffic of one training step for the parameters: weights read in
/// the forward and backward passes, gradients written, the optimizer's
/// state read and written and the weights written back:
/// M = N * (4*b + 2*opt). Activation traffic is not counted.
q::Bytes trainingStepBytes(q::Number Params, q::Bytes BytesPerParam,
                           q::Bytes OptimizerBytesPerParam);

/// Activations a transformer layer keeps for the backward pass, 16-bit, no
/// parallelism, no recomputation: A = s*b*h*(34 + 5*a*s/h) bytes per layer.
/// Korthikanti et al., Reducing Activation Recomputation, MLSys 2023, eq. 1.
q::Bytes transformerActivationBytes(q::Number Layers, q::Tokens Sequence,
                                    q::Number Batch, q::Number Hidden,
                                    q::Number Heads);

extern const Formula TrainingStateBytesF, TrainingStepBytesF,
    TransformerActivationBytesF;
extern const Formula WeightBytesF, KVBytesPerTokenF, DecodeStepBytesF,
    PrefillBytesF, MemoryTimeF, MemoryPerDeviceF, MlaKVBytesPerTokenF,
    MoeWeightBytesReadF, MoeWeightBytesPerDeviceF, InferenceActivationBytesF,
    AttentionScoreBytesF;

} // namespace mlsc::walls

#endif
