//===- SoftwareEfficiency.cpp - Wall 3: software efficiency ---------------===//
//
// The attention FLOP counts that split a step's work by kernel class, and
// the blended efficiency of the classes run one after another
// (SoftwareEfficiency.def).
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

namespace mlsc::walls {

using namespace q;

Flops attentionPairFlops(Number Layers, Number AttnDim, Number Pairs,
                         Number TP) {
  // QK^T and scores x V: 2 d_attn FLOPs each, a pair and a layer.
  return 2.0 * TwoPerToken * OneToken * Layers * Pairs * AttnDim / TP;
}

Flops decodeAttentionFlops(Number Layers, Number AttnDim, Number Batch,
                           Tokens Context, Number TP) {
  // The new token of each sequence against its ctx keys.
  return attentionPairFlops(Layers, AttnDim, Batch * (Context / OneToken), TP);
}

Flops prefillAttentionFlops(Number Layers, Number AttnDim, Number Batch,
                            Tokens Prompt, Number TP) {
  // Position i attends to i keys: S (S + 1) / 2 pairs a sequence.
  Number S = Prompt / OneToken;
  return attentionPairFlops(Layers, AttnDim, Batch * S * (S + 1.0) / 2.0, TP);
}

Flops encoderAttentionFlops(Number Layers, Number AttnDim, Tokens Sequence) {
  // Every token against all S.
  Number S = Sequence / OneToken;
  return attentionPairFlops(Layers, AttnDim, S * S, in<Number>(1));
}

Number blendedEfficiency(Flops Total, Flops Attention, Number GemmEfficiency,
                         Number AttentionEfficiency) {
  if (Total.value() <= 0)
    return GemmEfficiency;
  return Total / ((Total - Attention) / GemmEfficiency +
                  Attention / AttentionEfficiency);
}

Time stepOverheadTime(Time PerStep, Time PerLayer, Number Layers) {
  return PerStep + Layers * PerLayer;
}

} // namespace mlsc::walls
