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

Flops decodeAttentionFlops(Number Layers, Number AttnDim, Number Batch,
                           Tokens Context, Number TP) {
  return TwoPerToken * Layers * (Context / OneToken) * AttnDim * Batch *
         OneToken / TP;
}

Flops prefillAttentionFlops(Number Layers, Number AttnDim, Number Batch,
                            Tokens Prompt, Number TP) {
  Number S = Prompt / OneToken;
  return TwoPerToken * OneToken * Layers * Batch * S * (S + 1.0) * AttnDim /
         2.0 / TP;
}

Flops encoderAttentionFlops(Number Layers, Number AttnDim, Tokens Sequence) {
  Number S = Sequence / OneToken;
  return TwoPerToken * OneToken * Layers * S * S * AttnDim;
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
