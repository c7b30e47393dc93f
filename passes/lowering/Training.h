//===- Training.h - A decoder's training steps share this --*- C++ -*-===//
//
// The lowering steps of a decoder's training (TrainingInputs.cpp,
// TrainingMemory.cpp, TrainingStep.cpp) and the layout they share
// (TrainingLayout.cpp). Their state is LoweringContext::Training.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_LOWERING_TRAINING_H
#define MLSC_PASSES_LOWERING_TRAINING_H

#include "passes/lowering/Steps.h"

namespace mlsc {

/// The layout: dp, the checks against the model and the system, the
/// stages' layers, the global batch and its micro-batches. False (with a
/// located InvalidLayout error) when it cannot run.
bool trainingLayout(LoweringContext &Ctx);

/// A Bool field's folded value, or \p Default when it is not given.
bool flag(const ir::Entity &E, llvm::StringRef Path, bool Default);

} // namespace mlsc

#endif
