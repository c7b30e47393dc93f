//===- MemoryWall.cpp - Wall 2: bytes moved and memory capacity -----------===//
//
// Weight and KV-cache bytes per device, bytes moved by prefill and decode,
// the roofline memory time T = bytes / BW, and the capacity check
// weights + KV cache + activations <= device memory; the KV cache of
// multi-head latent attention, and the expert weights an MoE step reads.
// Known answers: test/unit/WallsTest.cpp, test/unit/EfficiencyTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/walls/MemoryWall.h"
#include "passes/walls/Formula.h"

#include <cmath>

namespace mlsc::walls {

using namespace q;

namespace {
const Tokens OneToken = in<Tokens>(1.0);
} // namespace

Bytes weightBytesPerDevice(Number Params, Bytes BytesPerParam, Number TP,
                           Number PP) {
  return Params * BytesPerParam / (TP * PP);
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

Bytes memoryPerDevice(Bytes Weights, BytesPerToken KV, Number Batch,
                      Tokens Sequence, Number TP) {
  return Weights + Batch * Sequence * KV / TP;
}

const Formula WeightBytesF = makeFormula<&weightBytesPerDevice>(
    "weight_bytes_per_device", Wall::Memory, "W = N * bytes / (tp * pp)",
    "definition");
const Formula KVBytesPerTokenF = makeFormula<&kvBytesPerToken>(
    "kv_bytes_per_token", Wall::Memory,
    "kv = 2 * layers * kv_heads * head_dim * bytes",
    "keys and values per layer; e.g. vLLM PagedAttention, SOSP 2023");
const Formula DecodeStepBytesF = makeFormula<&decodeStepBytes>(
    "decode_step_bytes", Wall::Memory, "M = W + B * ctx * kv / tp",
    "Williams et al., CACM 2009 (bytes moved per step)");
const Formula PrefillBytesF = makeFormula<&prefillBytes>(
    "prefill_bytes", Wall::Memory, "M = W + B * S * kv / tp",
    "Williams et al., CACM 2009 (bytes moved per step)");
const Formula MemoryTimeF = makeFormula<&memoryTime>(
    "memory_time", Wall::Memory, "T = M / (BW * eta_mem)",
    "Williams, Waterman, Patterson, Roofline, CACM 2009");
const Formula MemoryPerDeviceF = makeFormula<&memoryPerDevice>(
    "memory_per_device", Wall::Memory,
    "C = W + B * (prompt + output) * kv / tp",
    "capacity: weights plus the KV cache of every sequence in the batch");

const Formula TrainingStateBytesF = makeFormula<&trainingStateBytes>(
    "training_state_bytes", Wall::Memory, "S = N * (2*b + opt)",
    "Rajbhandari et al., ZeRO, SC 2020, section 3.1 (mixed-precision Adam: "
    "16 bytes per parameter)");
const Formula TrainingStepBytesF = makeFormula<&trainingStepBytes>(
    "training_step_bytes", Wall::Memory, "M = N * (4*b + 2*opt)",
    "weights read twice, gradients and weights written, optimizer state "
    "read and written; activations not counted");
const Formula TransformerActivationBytesF =
    makeFormula<&transformerActivationBytes>(
        "transformer_activation_bytes", Wall::Memory,
        "A = L * s*b*h*(34 + 5*a*s/h)",
        "Korthikanti et al., Reducing Activation Recomputation in Large "
        "Transformer Models, MLSys 2023, eq. 1");
const Formula MlaKVBytesPerTokenF = makeFormula<&mlaKVBytesPerToken>(
    "mla_kv_bytes_per_token", Wall::Memory,
    "kv = L * (kv_rank + rope_dim) * bytes",
    "DeepSeek-V2, arXiv 2405.04434, section 2.1 (multi-head latent "
    "attention caches one latent and one rotary key per layer)");
const Formula MoeWeightBytesReadF = makeFormula<&moeWeightBytesRead>(
    "moe_weight_bytes_read", Wall::Memory,
    "W = ((N - E*P_e) + E/ep*(1 - (1 - k/E)^T) * P_e) * bytes / (tp*pp), "
    "P_e = (N - A) / (E - k)",
    "expected distinct experts under uniform top-k routing (occupancy); "
    "Fedus et al., Switch Transformer, JMLR 2022");
const Formula MoeWeightBytesPerDeviceF = makeFormula<&moeWeightBytesPerDevice>(
    "moe_weight_bytes_per_device", Wall::Memory,
    "W = ((N - E*P_e) + E*P_e/ep) * bytes / (tp*pp)",
    "experts sharded across expert-parallel ranks: Lepikhin et al., GShard, "
    "2020; Rajbhandari et al., DeepSpeed-MoE, ICML 2022");
const Formula InferenceActivationBytesF =
    makeFormula<&inferenceActivationBytes>(
        "inference_activation_bytes", Wall::Memory,
        "A = T * (2*h + 2*ffn/tp) * bytes",
        "one layer's input, residual and FFN intermediates; vLLM measures "
        "it by profiling (Kwon et al., SOSP 2023)");
const Formula AttentionScoreBytesF = makeFormula<&attentionScoreBytes>(
    "attention_score_bytes", Wall::Memory, "A = B * heads/tp * S^2 * bytes",
    "unfused attention materialises the scores (Dao et al., FlashAttention, "
    "NeurIPS 2022)");

} // namespace mlsc::walls
