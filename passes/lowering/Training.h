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

/// Of a quantity on the last, the first and a middle pipeline stage, a 0/1
/// weight for each: 1 for the largest, the last winning ties, then the
/// first. The graph keeps them as nodes, so a sweep that changes which
/// stage is largest follows it.
struct StagePick {
  NodeId Last, First, Middle;
};
StagePick largestStage(GraphBuilder &B, NodeId Last, NodeId First,
                       NodeId Middle);
/// The value of the stage \p P picks: sum of weight x value.
NodeId pickStage(GraphBuilder &B, const StagePick &P, NodeId Last, NodeId First,
                 NodeId Middle);

/// A Bool field's folded value, or \p Default when it is not given.
bool flag(const ir::Entity &E, llvm::StringRef Path, bool Default);

} // namespace mlsc

#endif
