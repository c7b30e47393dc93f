//===- CommunicationWall.h - Wall 14: collectives (alpha-beta) --*- C++ -*-===//
#ifndef MLSC_PASSES_WALLS_COMMUNICATIONWALL_H
#define MLSC_PASSES_WALLS_COMMUNICATIONWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Ring all-reduce of M bytes over N ranks:
/// T = 2(N-1)/N * M/(beta*eta) + 2(N-1)*alpha. Thakur et al., IJHPCA 2005.
q::Time ringAllReduceTime(q::Bytes Message, q::Number Ranks,
                          q::Bandwidth LinkBW, q::Number Efficiency,
                          q::Time Latency);

/// Ring all-gather of an M-byte result: half an all-reduce,
/// (N-1)/N * M/(beta*eta) + (N-1)*alpha. Thakur et al., IJHPCA 2005.
q::Time ringAllGatherTime(q::Bytes Message, q::Number Ranks,
                          q::Bandwidth LinkBW, q::Number Efficiency,
                          q::Time Latency);

/// Ring reduce-scatter of an M-byte input: the all-gather's traffic reversed,
/// (N-1)/N * M/(beta*eta) + (N-1)*alpha. Thakur et al., IJHPCA 2005.
q::Time ringReduceScatterTime(q::Bytes Message, q::Number Ranks,
                              q::Bandwidth LinkBW, q::Number Efficiency,
                              q::Time Latency);

/// The hidden-state tensor a tensor-parallel layer all-reduces, at the
/// activations' precision: M = B * tokens * hidden * bytes, with tokens the
/// positions per sequence in the step (1 in decode, the prompt in prefill).
/// Shoeybi et al., Megatron-LM, arXiv 1909.08053, section 3.
q::Bytes tensorParallelMessage(q::Number Batch, q::Tokens Length,
                               q::Number Hidden, q::Bytes ActivationPrecision);

/// Forward tensor-parallel communication of one transformer layer: two ring
/// all-reduces of M (after attention, after the MLP). Megatron-LM, Fig. 4.
q::Time tensorParallelLayerTime(q::Bytes Message, q::Number TP,
                                q::Bandwidth LinkBW, q::Number Efficiency,
                                q::Time Latency);

/// nccl-tests algorithm bandwidth: algbw = M / t.
q::Bandwidth algorithmBandwidth(q::Bytes Message, q::Time Elapsed);

/// nccl-tests all-reduce bus bandwidth: busbw = algbw * 2(N-1)/N, the
/// per-rank link rate a ring achieves. nccl-tests doc/PERFORMANCE.md.
q::Bandwidth allReduceBusBandwidth(q::Bandwidth AlgBW, q::Number Ranks);

extern const Formula RingAllReduceTimeF, RingAllGatherTimeF,
    RingReduceScatterTimeF, TensorParallelMessageF, TensorParallelLayerTimeF,
    AlgorithmBandwidthF, AllReduceBusBandwidthF;

} // namespace mlsc::walls

#endif
