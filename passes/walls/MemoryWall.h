//===- MemoryWall.h - Wall 2: bytes moved and memory capacity ----*- C++ -*-===//
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
q::Bytes decodeStepBytes(q::Bytes Weights, q::BytesPerToken KV,
                         q::Number Batch, q::Tokens Context, q::Number TP);

/// Bytes moved by a prefill per device: weights read once, KV written:
/// W + B*S*kv / tp.
q::Bytes prefillBytes(q::Bytes Weights, q::BytesPerToken KV, q::Number Batch,
                      q::Tokens Prompt, q::Number TP);

/// Roofline memory time: T = bytes / (BW * eta_mem).
q::Time memoryTime(q::Bytes Moved, q::Bandwidth BW, q::Number Efficiency);

/// Memory needed per device: weights + the KV cache of B full sequences.
q::Bytes memoryPerDevice(q::Bytes Weights, q::BytesPerToken KV,
                         q::Number Batch, q::Tokens Sequence, q::Number TP);

extern const Formula WeightBytesF, KVBytesPerTokenF, DecodeStepBytesF,
    PrefillBytesF, MemoryTimeF, MemoryPerDeviceF;

} // namespace mlsc::walls

#endif
