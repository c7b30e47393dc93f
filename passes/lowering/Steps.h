//===- Steps.h - The lowering steps and the table that runs them -*- C++
//-*-===//
#ifndef MLSC_PASSES_LOWERING_STEPS_H
#define MLSC_PASSES_LOWERING_STEPS_H

#include "passes/lowering/Context.h"

#include "llvm/ADT/ArrayRef.h"

namespace mlsc {

#define STEP(Family, Wall, Function, Summary) bool Function(LoweringContext &);
#include "passes/lowering/Steps.def"

/// Reads the trace a `simulate` block names into \p In (SimTrace.cpp);
/// false after a diagnostic.
bool readSimTrace(LoweringContext &Ctx, graph::SimInputs &In);

/// Whether \p X is a finite whole number.
bool isWhole(double X);

/// Where a diagnostic about a workload's field points: its value when the
/// field is written, else the workload's name (the field is a default).
llvm::SMRange fieldAt(const ir::Entity &W, llvm::StringRef Path);

/// Checks a parallel layout against the model and the system
/// (passes/lowering/Layout.cpp): tp against the attention and KV heads, pp
/// against the layers, the replica's \p Replica = tp x pp x OTHER devices
/// (OTHER \p OtherName, ep in serving and cp x dp in training, \p OtherValue
/// its folded value) against the system's. Reports each violation as
/// InvalidLayout and fails the lowering; adds the same conditions as domain
/// checks for sweeps and solves.
bool checkLayout(LoweringContext &Ctx, NodeId TP, NodeId PP, NodeId Replica,
                 const char *OtherName, double OtherValue,
                 const std::string &OtherText = "");

/// Sized prefill/decode pools: the prefill pool's replicas must leave at
/// least one decode replica (InvalidLayout; a domain check for sweeps).
bool checkPools(LoweringContext &Ctx, NodeId ReplicaDevices,
                NodeId DecodeReplicas);

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
