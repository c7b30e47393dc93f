//===- Phase.h - Lowering one phase of a workload on the roofline -*- C++
//-*-===//
//
// One helper lowers every phase (a prefill, a decode step, a request's own
// prefill, a draft model's step): given its FLOPs, their attention part and
// the bytes it moves, it adds the phase's blended efficiency (wall 3), its
// compute and memory times, intensity and roofline (walls 1-2), weight
// streaming (wall 6) and tensor-parallel communication (wall 14), publishes
// them as the phase's metrics (ir/Metrics.def), and returns its step time.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_LOWERING_PHASE_H
#define MLSC_PASSES_LOWERING_PHASE_H

#include "passes/lowering/Context.h"

namespace mlsc {

/// The work of one phase per device.
struct PhaseWork {
  NodeId Sequences; ///< sequences in the step
  NodeId Tokens;    ///< positions per sequence (1 in decode)
  NodeId Flops, AttentionFlops, Bytes;
  /// The phase's efficiency when it is given (a CNN's whole-model kernel
  /// efficiency) rather than blended from the GEMM and attention classes.
  std::optional<NodeId> Efficiency;
  /// Communication not overlapped with compute when the phase has its own
  /// (a training step's gradient all-reduce); otherwise the machine's
  /// tensor-parallel all-reduces.
  std::optional<NodeId> Comm;
};

/// Lowers phase \p P on machine \p M; returns (and publishes) its step time.
NodeId lowerPhase(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                  const PhaseWork &Work);

/// Weight bytes a pass over \p Tokens tokens reads per device: all of them
/// for a dense model, the experts it touches for an MoE model (published as
/// the phase's weight_bytes), none when the weights stream in (wall 6).
NodeId weightsRead(LoweringContext &Ctx, NodeId Tokens,
                   std::optional<PhaseId> P);

} // namespace mlsc

#endif
