//===- MemoryWall.cpp - Wall 2: bytes moved and memory capacity -----------===//
//
// Weight and KV-cache bytes per device, bytes moved by prefill and decode,
// the roofline memory time T = bytes / BW, and the capacity check
// weights + KV cache <= device memory. Activations and runtime overheads
// come with the serving walls. Known answers: test/unit/WallsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/walls/MemoryWall.h"
#include "passes/walls/Formula.h"

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

Bytes decodeStepBytes(Bytes Weights, BytesPerToken KV, Number Batch,
                      Tokens Context, Number TP) {
  return Weights + Batch * Context * KV / TP;
}

Bytes prefillBytes(Bytes Weights, BytesPerToken KV, Number Batch,
                   Tokens Prompt, Number TP) {
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

} // namespace mlsc::walls
