//===- WeightStreamingWall.h - Wall 6: weight streaming ---------*- C++ -*-===//
#ifndef MLSC_PASSES_WALLS_WEIGHTSTREAMINGWALL_H
#define MLSC_PASSES_WALLS_WEIGHTSTREAMINGWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// One layer whose weights stream in from off-chip memory while a batch of
/// B tokens runs through it: T = max(P*b / BW_inject, 2*P*B / (peak*eta)).
/// MLSYSIM, arXiv 2607.02558 (Cerebras weight streaming).
q::Time weightStreamingLayerTime(q::Number LayerParams, q::Bytes BytesPerParam,
                                 q::Bandwidth Inject, q::Tokens BatchTokens,
                                 q::FlopRate Peak, q::Number Efficiency);

/// Whole model: T = layers * T_layer (layers stream one after another).
/// MLSYSIM, arXiv 2607.02558.
q::Time weightStreamingModelTime(q::Number Layers, q::Time LayerTime);

/// Batch at which streaming and compute take equal time:
/// B* = peak * eta * b / (2 * BW_inject); above it compute bounds the layer.
q::Tokens weightStreamingCrossoverBatch(q::Bytes BytesPerParam,
                                        q::Bandwidth Inject, q::FlopRate Peak,
                                        q::Number Efficiency);

extern const Formula WeightStreamingLayerTimeF, WeightStreamingModelTimeF,
    WeightStreamingCrossoverBatchF;

} // namespace mlsc::walls

#endif
