//===- StepModel.h - A decoder's step time as a function -----------*- C++
//-*-===//
//
// The prefill and decode steps of a served decoder, exported by lowering as
// a callable over (batch, cached tokens, new tokens): a batch of B
// sequences, each with C tokens already in its KV cache, each processing N
// new tokens (N = 1 in decode, the prompt in a prefill from empty). The
// serving simulator calls it on its own state - any mix of batch and
// context - without lowering the scenario again.
//
// It applies the formula library's functions to the values of the nodes
// lowering exported (graph::StepInputs), on the same roofline as the graph:
//   F      = (2*N_a*B*N + 2*L*B*d_attn*(N*C + N(N+1)/2)) / tp
//   F_attn = 2*L*B*d_attn*(N*C + N(N+1)/2) / tp
//   M      = W_read(B*N tokens) + B*(C + N)*kv / tp
//   T      = max(F / (peak*eta), M / (BW*eta_mem), T_streaming) + T_comm
//            + beta_step + L * beta_layer
// with eta blended from the GEMM and attention classes (wall 3), weight
// streaming (wall 6) and two tensor-parallel all-reduces per layer (wall
// 14). The graph's decode step is this at (B, ctx - 1, 1), its attention
// counting ctx tokens including the new one, and its prefill at (B, 0, S).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_STEPMODEL_H
#define MLSC_RUNTIME_STEPMODEL_H

#include "runtime/Evaluator.h"

#include <optional>

namespace mlsc {

/// One step's breakdown, in SI units.
struct StepTime {
  double Flops = 0, AttentionFlops = 0, Bytes = 0;
  double Efficiency = 0;
  double Compute = 0, Memory = 0, Streaming = 0, Comm = 0;
  double PipelineSends = 0;  ///< part of Comm: sends between pipeline stages
  double ExpertAllToAll = 0; ///< part of Comm: expert dispatch and combine
  double Overhead = 0;       ///< the step's fixed cost (wall 3)
  double Time = 0; ///< max(compute, memory, streaming) + comm + overhead
};

/// What one iteration of a continuous-batching engine runs: sequences
/// each processing some new tokens (one in decode, a chunk of the prompt
/// in prefill), the attention pairs those tokens form with the cache and
/// with each other, and the tokens whose KV the step reads.
struct StepShape {
  double Sequences = 0;
  double Tokens = 0;        ///< new tokens, all sequences
  double DecodePairs = 0;   ///< attention pairs of one-token (decode) steps
  double PrefillPairs = 0;  ///< attention pairs of prompt chunks
  double ContextTokens = 0; ///< cached + new tokens whose KV is read
  double DecodeTokens = 0;  ///< of Tokens, the decodes' (one a sequence)
  /// Of Sequences and ContextTokens, the decodes' (the rest are prompt
  /// chunks): under expert parallelism decodes spread over the ep groups
  /// and each prompt stays whole on one.
  double DecodeSequences = 0, DecodeContextTokens = 0;
};

class StepModel {
public:
  /// The step model of an evaluated decoder graph; none for a graph
  /// without one (a CNN, an encoder, decoder training).
  static std::optional<StepModel> of(const Evaluator &E);
  /// Under speculative decoding, the draft model's step model (on the
  /// target's devices); none without a draft.
  static std::optional<StepModel> draftOf(const Evaluator &E);

  /// A step of \p Batch sequences with \p Cached tokens each in the KV
  /// cache, each processing \p New tokens, through every pipeline stage in
  /// turn (under pipeline parallelism, \p Batch is one micro-batch).
  StepTime step(double Batch, double Cached, double New) const;
  double time(double Batch, double Cached, double New) const {
    return step(Batch, Cached, New).Time;
  }
  /// A mixed iteration: decodes and prompt chunks in one step (the serving
  /// simulator's). step() is this with every sequence alike.
  StepTime shape(const StepShape &S) const;

private:
  static StepModel of(const Evaluator &E, const graph::StepInputs &In);

  double Params = 0, Layers = 0, AttnDim = 0, DecodeAttnDim = 0, Hidden = 0,
         KV = 0;
  double KVShards = 1;
  double TP = 1, PP = 1, EP = 1, BytesPerWeight = 0, WeightsPerDevice = 0;
  double Peak = 0, EtaGemm = 0, EtaAttention = 0, BW = 0, EtaMem = 0;
  double ActivationBytes = 0;
  bool Fabric = false;
  double FabricBW = 0, FabricLatency = 0, EtaComm = 0;
  double CollectiveOverhead = 0; ///< an all-reduce call's fixed cost
  double InterBW = 0, InterLatency = 0, NodeRanks = 1;
  bool Streams = false;
  double InjectBW = 0;
  bool Moe = false;
  double MoeParams = 0, MoeActive = 0, MoeExperts = 0, MoeTopK = 0;
  double MoeLayers = 0, MoeImbalance = 1;
  /// The parameters every token computes, and the routed experts' active
  /// ones times the imbalance (the graph's moe.always_active_params and
  /// moe.busiest_rank_routed_params), set once in of().
  double MoeAlways = 0, MoeRouted = 0;
  double MoeGroups = 0, MoeGroupsPerToken = 0, MoeDispatchRatio = 1;
  double MoeInterBW = 0, MoeInterLatency = 0;
  double StepOverhead = 0, LayerOverhead = 0;
  /// GEMM arithmetic and weight reads overlapping (kernels.overlap).
  double Overlap = 1;
};

} // namespace mlsc

#endif
