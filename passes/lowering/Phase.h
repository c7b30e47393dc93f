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
  /// Under expert parallelism, the busiest group's share of them (its
  /// tensor-parallel all-reduces carry those); otherwise none.
  std::optional<NodeId> GroupSequences;
  NodeId Tokens; ///< positions per sequence (1 in decode)
  NodeId Flops, AttentionFlops, Bytes;
  /// The phase's efficiency when it is given (a CNN's whole-model kernel
  /// efficiency) rather than blended from the GEMM and attention classes.
  std::optional<NodeId> Efficiency;
  /// Communication not overlapped with compute when the phase has its own
  /// (a training step's gradient all-reduce); otherwise the machine's
  /// tensor-parallel all-reduces.
  std::optional<NodeId> Comm;
  /// The weight bytes among Bytes, for a decoder phase: its roofline is then
  /// taken per kernel class (the GEMMs on the weights, attention on the KV
  /// cache; formula kernel_class_roofline_time).
  std::optional<NodeId> WeightBytes;
};

/// Lowers phase \p P on machine \p M; returns (and publishes) its step time.
NodeId lowerPhase(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                  const PhaseWork &Work);

/// lowerPhase, returning the phase's parts as well as its step.
PhaseTimes lowerPhaseParts(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                           const PhaseWork &Work);

/// The latency part of phase \p P's communication: its collectives with no
/// tokens to carry (each is affine in its message).
NodeId lowerCommLatency(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                        const PhaseWork &Work);

/// Lowers phase \p P's work as lowerPhase does at another batch, publishing
/// nothing: its values are labelled \p Label + "." + suffix
/// (`decode.at_slots.compute_time`) for explain.
PhaseTimes lowerHiddenPhase(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                            const PhaseWork &W, const std::string &Label);

/// A decode step of \p Batch sequences (as min(pp, B) micro-batches; in
/// passes/lowering/DecoderSteps.cpp). Unless \p Hidden names it, this is
/// the decode phase: published, with its micro-batches, weights read and
/// step kept in the decoder's state. With \p Verify (hidden only), a
/// speculative target step of that many positions a sequence.
PhaseTimes lowerDecodeAt(LoweringContext &Ctx, NodeId Batch,
                         const std::string &Hidden,
                         std::optional<NodeId> Verify = std::nullopt);

/// Speculative decoding: the target's positions a verifying step runs (k
/// draft tokens and its own, k + 1), and a token's time at \p Batch
/// sequences (k draft steps and one verifying step over E tokens),
/// labelled \p Label for explain. In passes/lowering/DecoderSteps.cpp.
NodeId speculativeVerifyPositions(LoweringContext &Ctx);
/// The draft model's prefill of \p Tokens prompt tokens: the draft builds
/// its own KV cache of the prompt before it proposes.
PhaseTimes draftPrefill(LoweringContext &Ctx, NodeId Tokens);
NodeId speculativeTokenTimeAt(LoweringContext &Ctx, NodeId Batch,
                              const std::string &Label);

/// On the decode step \p Step: the GEMM time a chunk's GEMMs are scaled
/// from, the time they hide under (the weight read, or a stream of
/// weights; zero both when the step has one roofline) and the step's
/// tokens.
struct ChunkHiding {
  NodeId Gemm, Weights, Tokens;
};
ChunkHiding chunkHiding(LoweringContext &Ctx, const PhaseTimes &Step);

/// A prompt's chunks riding on the decode step \p Step
/// (chunked_prefill_time), or with \p Hybrid one iteration carrying a
/// chunk (hybrid_iteration_time): the chunks' GEMMs hide under the step's
/// weight read only as far as the step is memory-bound. A step with one
/// roofline has no kernel classes: its chunks hide under it whole.
NodeId chunksOnStep(LoweringContext &Ctx, NodeId Prefill,
                    const PhaseTimes &Step, NodeId Prompt, NodeId Chunk,
                    bool Hybrid = false,
                    std::optional<NodeId> Carried = std::nullopt);
/// What a prefill's chunks carry into the iterations they ride on besides
/// their GEMMs: its attention kernel class (compute or KV traffic,
/// whichever is longer) and the bytes of its communication (\p Comm less
/// \p CommLatency, the latencies the iteration's own collectives pay).
NodeId chunkCarried(LoweringContext &Ctx, const PhaseTimes &Parts,
                    NodeId CommLatency);

/// Weight bytes a pass over \p Tokens tokens reads per device: all of them
/// for a dense model, the experts it touches for an MoE model (published as
/// the phase's weight_bytes), none when the weights stream in (wall 6).
NodeId weightsRead(LoweringContext &Ctx, NodeId Tokens,
                   std::optional<PhaseId> P);

/// The decoder a phase runs: the parameters its FLOPs count (an MoE
/// model's active ones), its layers, attention width and KV bytes per token.
struct DecoderShape {
  NodeId Params, Layers, AttnDim, KV;
  /// The ways the KV cache is split across a tensor-parallel group:
  /// min(tp, kv_heads), 1 for a latent (MLA) cache.
  NodeId KVShards;
  /// Expert parallelism over ep > 1: the step's sequences are split over
  /// the ep groups, the routed experts' work over all ranks.
  std::optional<ExpertGroups> Groups = std::nullopt;
};

/// A prefill (from an empty cache) or a decode step of a decoder.
enum class DecoderPass { Prefill, Decode };

/// The work of a decoder phase: \p Sequences sequences, each processing
/// \p Tokens new tokens (the prompt in a prefill, one in decode), attention
/// over \p Span tokens (the prompt, or the mean context in decode), with
/// \p Weights bytes of weights read per device. Its bytes, attention FLOPs
/// and FLOPs come from the pass's formulas (walls 1-3) and are published as
/// phase \p P's metrics (only labelled \p Hidden + "." + suffix when
/// \p Hidden is given); lowerPhase then times the work.
PhaseWork decoderWork(LoweringContext &Ctx, PhaseId P, DecoderPass Pass,
                      const DecoderShape &S, NodeId Weights, NodeId Sequences,
                      NodeId Tokens, NodeId Span, NodeId TP,
                      const std::string &Hidden = "");

} // namespace mlsc

#endif
