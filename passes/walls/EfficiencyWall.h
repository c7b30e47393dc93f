//===- EfficiencyWall.h - Wall 3: software efficiency -------------*- C++
//-*-===//
#ifndef MLSC_PASSES_WALLS_EFFICIENCYWALL_H
#define MLSC_PASSES_WALLS_EFFICIENCYWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

#include "llvm/ADT/ArrayRef.h"

namespace mlsc::walls {

/// A kernel class and the fraction of dense peak its kernels reach: the
/// default the lowering uses when a workload gives no value, the plausible
/// range sensitivity analysis explores, and where the figures come from.
struct KernelClass {
  const char *Field; ///< the workload field: "kernels.gemm"
  const char *Name;  ///< "GEMM (linear layers)"
  double Default, Low, High;
  const char *Source;
};

/// gemm, attention (fused), attention (unfused), conv: docs/walls.md, wall 3.
llvm::ArrayRef<KernelClass> kernelClasses();
const KernelClass &kernelClass(llvm::StringRef Field);

/// A calibrated factor's plausible range, explored by sensitivity analysis
/// (wall 21): the kernel classes above, and the other calibrated leaves.
struct CalibratedRange {
  const char *Field; ///< the leaf's field: "memory_efficiency"
  double Low, High;
  const char *Source;
};
llvm::ArrayRef<CalibratedRange> calibratedRanges();

// The attention FLOP counts (decodeAttentionFlops, prefillAttentionFlops,
// encoderAttentionFlops) are wall 1's: passes/walls/ComputeWall.h.

/// The efficiency of a step whose FLOPs F split into GEMM FLOPs F - F_a at
/// eta_g and attention FLOPs F_a at eta_a, the classes running one after
/// the other: eta = F / ((F - F_a) / eta_g + F_a / eta_a), so that
/// F / (peak * eta) is the sum of the classes' roofline compute times.
q::Number blendedEfficiency(q::Flops Total, q::Flops Attention,
                            q::Number GemmEfficiency,
                            q::Number AttentionEfficiency);

extern const Formula DecodeAttentionFlopsF, PrefillAttentionFlopsF,
    EncoderAttentionFlopsF, BlendedEfficiencyF;

} // namespace mlsc::walls

#endif
