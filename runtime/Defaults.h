//===- Defaults.h - Defaults and plausible ranges of calibrated factors -*-===//
//
// The kernel-class efficiencies of wall 3 (the default the lowering uses
// when a workload gives no value, the plausible range sensitivity analysis
// explores, and where the figures come from), and the plausible ranges of
// the other calibrated factors.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_DEFAULTS_H
#define MLSC_RUNTIME_DEFAULTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlsc::walls {

/// A kernel class and the fraction of dense peak its kernels reach.
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

} // namespace mlsc::walls

#endif
