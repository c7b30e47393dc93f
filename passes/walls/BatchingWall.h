//===- BatchingWall.h - Wall 5: paged KV cache and batching -----*- C++ -*-===//
#ifndef MLSC_PASSES_WALLS_BATCHINGWALL_H
#define MLSC_PASSES_WALLS_BATCHINGWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Paged KV cache: blocks per sequence = ceil(len / b) for blocks of b
/// tokens. Kwon et al., PagedAttention (vLLM), SOSP 2023.
q::Number kvBlocksPerSequence(q::Tokens Length, q::Tokens BlockSize);

/// KV bytes one sequence holds per device in whole blocks:
/// ceil(len / b) * b * kv / tp. Kwon et al., SOSP 2023.
q::Bytes pagedKVBytesPerSequence(q::Tokens Length, q::Tokens BlockSize,
                                 q::BytesPerToken KV, q::Number TP);

/// Bytes left unused in a sequence's last block (per device):
/// (ceil(len / b) * b - len) * kv / tp. Kwon et al., SOSP 2023, section 4.2.
q::Bytes kvBytesWastedPerSequence(q::Tokens Length, q::Tokens BlockSize,
                                  q::BytesPerToken KV, q::Number TP);

/// Maximum concurrent sequences from free memory:
/// floor((HBM - weights - overhead) / KV per sequence). Kwon et al., SOSP 2023.
q::Number maxConcurrentSequences(q::Bytes DeviceMemory, q::Bytes Weights,
                                 q::Bytes Overhead, q::Bytes KVPerSequence);

/// Static batching waits for the longest sequence of the batch:
/// X = B * mean_out / (max_out * T_step). Yu et al., Orca, OSDI 2022.
q::TokenRate staticBatchThroughput(q::Number Batch, q::Tokens MeanOutput,
                                   q::Tokens MaxOutput, q::Time DecodeStep);

/// Throughput gain of continuous over static batching at equal batch and
/// step time: max_out / mean_out. Yu et al., Orca, OSDI 2022.
q::Number continuousBatchingGain(q::Tokens MeanOutput, q::Tokens MaxOutput);

/// Roofline decode step at batch B, every term linear in B:
/// T(B) = max(B * f / peak, (W + B * m) / BW). Williams et al., CACM 2009.
q::Time batchedDecodeStepTime(q::Number Batch, q::Flops FlopsPerSequence,
                              q::Bytes Weights, q::Bytes BytesPerSequence,
                              q::FlopRate Peak, q::Bandwidth BW);

/// Throughput-optimal batch under a TPOT limit: the largest B with
/// T(B) <= TPOT, min(floor(TPOT*peak/f), floor((TPOT*BW - W)/m), capacity).
q::Number maxBatchUnderTPOT(q::Time TPOTLimit, q::Flops FlopsPerSequence,
                            q::Bytes Weights, q::Bytes BytesPerSequence,
                            q::FlopRate Peak, q::Bandwidth BW,
                            q::Number Capacity);

extern const Formula KVBlocksPerSequenceF, PagedKVBytesPerSequenceF,
    KVBytesWastedPerSequenceF, MaxConcurrentSequencesF, StaticBatchThroughputF,
    ContinuousBatchingGainF, BatchedDecodeStepTimeF, MaxBatchUnderTPOTF;

} // namespace mlsc::walls

#endif
