//===- Steps.h - The lowering steps and the table that runs them -*- C++
//-*-===//
#ifndef MLSC_PASSES_LOWERING_STEPS_H
#define MLSC_PASSES_LOWERING_STEPS_H

#include "passes/lowering/Context.h"

#include "llvm/ADT/ArrayRef.h"

namespace mlsc {

#define STEP(Family, Wall, Function, Summary) bool Function(LoweringContext &);
#include "passes/lowering/Steps.def"

/// The workloads a step lowers.
enum class StepFamily : uint8_t {
  DecoderInference,
  DecoderTraining,
  PerSample,
  All
};

struct LoweringStep {
  StepFamily Family;
  Wall W;
  bool (*Run)(LoweringContext &);
  const char *Name; ///< "lowerDecoderMemory"
  const char *Summary;
};

/// Every step, in the order they run.
llvm::ArrayRef<LoweringStep> allSteps();

/// Runs the steps of the context's workload family in table order, until
/// one fails. False when one failed.
bool runSteps(LoweringContext &Ctx);

} // namespace mlsc

#endif
