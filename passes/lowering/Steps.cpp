//===- Steps.cpp - The table of lowering steps ----------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

namespace {
const LoweringStep Table[] = {
#define STEP(Family, W, Function, Summary)                                     \
  {StepFamily::Family, Wall::W, &Function, #Function, Summary},
#include "passes/lowering/Steps.def"
};

bool runsFor(StepFamily S, WorkloadFamily F) {
  switch (S) {
  case StepFamily::All:
    // The steps every workload shares read what a family's input step
    // lowers (the devices' TDP, the throughput).
    (void)F;
    return true;
  case StepFamily::DecoderInference:
    return F == WorkloadFamily::DecoderInference;
  case StepFamily::DecoderTraining:
    return F == WorkloadFamily::DecoderTraining;
  case StepFamily::PerSample:
    return F == WorkloadFamily::PerSample;
  }
  return false;
}
} // namespace

llvm::ArrayRef<LoweringStep> allSteps() { return Table; }

bool runSteps(LoweringContext &Ctx) {
  for (const LoweringStep &S : Table)
    if (runsFor(S.Family, Ctx.Family) && !S.Run(Ctx))
      return false;
  return true;
}

} // namespace mlsc
