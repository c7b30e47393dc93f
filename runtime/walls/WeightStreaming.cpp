//===- WeightStreaming.cpp - Wall 6: weight streaming ---------------------===//
//
// Execution with the weights held off-chip (Cerebras MemoryX/SwarmX) and
// streamed in a layer at a time while activations stay on the wafer: each
// layer costs the larger of its injection time and its compute time, and
// the layers run in sequence. The compute term counts forward FLOPs
// (2 per parameter per token); training's backward pass and the gradients
// streamed back out are not modelled. Known answers:
// test/unit/WeightStreamingTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>

namespace mlsc::walls {

using namespace q;

Time weightStreamingLayerTime(Number LayerParams, Bytes BytesPerParam,
                              Bandwidth Inject, Tokens BatchTokens,
                              FlopRate Peak, Number Efficiency) {
  Time Stream = LayerParams * BytesPerParam / Inject;
  Time Compute = TwoPerToken * LayerParams * BatchTokens / (Peak * Efficiency);
  return std::max(Stream, Compute);
}

Time weightStreamingModelTime(Number Layers, Time LayerTime) {
  return Layers * LayerTime;
}

Tokens weightStreamingCrossoverBatch(Bytes BytesPerParam, Bandwidth Inject,
                                     FlopRate Peak, Number Efficiency) {
  return Peak * Efficiency * BytesPerParam / (TwoPerToken * Inject);
}

} // namespace mlsc::walls
