//===- DecoderMemory.cpp - Wall 2: what fills a decoder's device memory ---===//
//
// Weights per device (sharded by tensor, pipeline and expert parallelism;
// two resident layers when they stream in, wall 6), a speculative draft
// model's weights and KV cache (wall 4), the activations of the largest
// forward pass, the runtime's reserve, and the batch's paged KV cache,
// against the device's memory.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

namespace {

/// Wall 4: a draft model for speculative decoding shares the devices,
/// batch, precision and tensor parallelism of the target.
std::optional<DraftModel> draftModel(LoweringContext &Ctx) {
  const ir::Entity &W = *Ctx.Workload;
  DecoderState &T = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity *M = Ctx.entity(W, "speculative.draft");
  if (!M)
    return std::nullopt;
  const char *Why = "the draft model's decode step (speculative decoding)";
  DraftModel D;
  D.Params = Ctx.required(*M, "params", Why);
  D.Layers = Ctx.required(*M, "layers", Why);
  NodeId Heads = Ctx.required(*M, "heads", Why);
  std::optional<NodeId> HeadDim = Ctx.field(*M, "head_dim");
  std::optional<NodeId> Hidden = Ctx.field(*M, "hidden");
  if (!HeadDim) {
    NodeId H = Hidden ? *Hidden : Ctx.required(*M, "hidden", Why);
    HeadDim = B.op(Op::Div, {H, Heads});
  }
  std::optional<NodeId> KVHeads = Ctx.field(*M, "kv_heads");
  D.AttnDim = B.op(Op::Mul, {Heads, *HeadDim});
  D.Hidden = Hidden ? *Hidden : D.AttnDim;
  D.Tokens = Ctx.required(W, "speculative.tokens", "draft tokens per step (k)");
  D.Acceptance = Ctx.required(W, "speculative.acceptance",
                              "the draft tokens' acceptance rate");
  if (Ctx.Failed)
    return std::nullopt;
  D.Weights =
      B.apply(FormulaId::WeightBytes, {D.Params, T.WeightBytes, T.TP, T.PP},
              "draft.weights_per_device");
  D.KV = B.apply(FormulaId::KVBytesPerToken,
                 {D.Layers, KVHeads ? *KVHeads : Heads, *HeadDim, T.KVBytes},
                 "draft.kv_bytes_per_token");
  D.KVShards = B.op(Op::Min, {T.TP, KVHeads ? *KVHeads : Heads});
  return D;
}

} // namespace

bool lowerDecoderMemory(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  B.publish(MetricId::ReplicaDevices, D.ReplicaDevices);
  NodeId Stored;
  if (D.Moe) {
    Stored = B.apply(FormulaId::MoeWeightBytesPerDevice,
                     {D.Moe->Params, D.Moe->Active, D.Moe->Experts, D.Moe->TopK,
                      D.WeightBytes, B.op(Op::Mul, {D.TP, D.PP}), D.EP},
                     "");
  } else {
    Stored = B.apply(FormulaId::WeightBytes,
                     {D.Params, D.WeightBytes, D.TP, D.PP}, "");
  }
  B.publish(MetricId::WeightsPerDevice, Stored);
  D.Weights = Stored;
  NodeId Resident = Stored;
  if (D.Machine.InjectBW) {
    // Wall 6: two layers are resident (one computing, one streaming in).
    Resident =
        B.op(Op::Div,
             {B.op(Op::Mul, {Stored, B.constant(2, "double-buffered layers")}),
              D.Layers});
    B.publish(MetricId::ResidentWeightsPerDevice, Resident);
  }

  // Wall 4: the draft model's weights and KV cache count against memory.
  D.Draft = draftModel(Ctx);

  // Activations: the largest forward pass is a request's prefill (the whole
  // batch's with static batching), or one chunk with chunked prefill, and
  // never more than the runtime's token budget a pass (a longer prefill
  // runs in passes of it: TensorRT-LLM's max_num_tokens, vLLM's
  // max_num_batched_tokens).
  NodeId PassTokens = D.Chunk    ? *D.Chunk
                      : D.Static ? B.op(Op::Mul, {D.Batch, D.Prompt})
                                 : D.Prompt;
  PassTokens =
      B.op(Op::Min, {PassTokens, Ctx.orDefault(W, DefaultId::MaxBatchTokens)});
  B.label(PassTokens, "activation_tokens");
  NodeId FFN = D.FFN ? *D.FFN
                     : B.op(Op::Mul, {B.constant(4, "default ffn = 4h"),
                                      D.Machine.Hidden});
  NodeId Activations =
      B.apply(FormulaId::InferenceActivationBytes,
              {PassTokens, D.Machine.Hidden, FFN, D.TP, D.ActBytes}, "");
  if (!D.Fused) {
    B.label(Activations, metricInfo(MetricId::ActivationsPerDevice).Name);
    NodeId Scores =
        B.apply(FormulaId::AttentionScoreBytes,
                {D.Static ? D.Batch : B.constant(1, "one request's prefill"),
                 D.Heads, D.Chunk ? *D.Chunk : D.Prompt, D.TP, D.ActBytes},
                "attention_scores_per_device");
    Activations = B.op(Op::Add, {Activations, Scores});
  }
  B.publish(MetricId::ActivationsPerDevice, Activations);

  // Wall 5: the batch must fit a paged KV cache in the memory the serving
  // runtime leaves free (vLLM's defaults: 16-token blocks, 90% usable).
  // Continuous batching admits and retires sequences one by one, so the
  // slots hold sequences at every point of their output: on average the
  // prompt and half the output each (the decode's mean context), and with
  // many slots the sum stays close to that mean. A static batch's
  // sequences grow together to their full length, and the batch runs to
  // the output's cap (its longest sequence), so each cache is sized for
  // prompt + max_output, as static caches are allocated up front
  // (FasterTransformer's max_seq_len, Hugging Face's StaticCache
  // max_cache_len). An engine that reserves
  // a request's cache to completion (TensorRT-LLM's GUARANTEED_NO_EVICT
  // capacity scheduler, its default: blocks for the prompt and max_tokens
  // must be free before a request is admitted) holds each slot at its full
  // length, the output's cap where the workload gives one.
  NodeId Block = Ctx.orDefault(W, DefaultId::KVBlock);
  D.Longest = D.Sequence;
  if (D.OutputCap) {
    D.Longest = B.op(Op::Add, {D.Prompt, *D.OutputCap});
    B.publish(MetricId::OutputCap, *D.OutputCap);
  }
  NodeId Held = D.Static ? D.Longest : D.Context;
  if (D.ReserveToCompletion && !D.Static) {
    // Reserved to its cap, or to its own output: a slot then holds the
    // length-biased output all along when the outputs spread.
    Held = D.Longest;
    if (!D.OutputCap && D.SlotOutput) {
      Held = B.op(Op::Add, {D.Prompt, *D.SlotOutput});
      B.label(Held, "reserved_sequence_length");
    }
    B.publish(MetricId::KVReservedToCompletion,
              B.constant(1, "kv_allocation = to_completion"));
  }
  NodeId PerSequence = B.apply(FormulaId::PagedKVBytesPerSequence,
                               {Held, Block, D.KV, D.KVStoreShards}, "");
  B.publish(MetricId::KVBytesPerSequence, PerSequence);
  NodeId AllWeights = Resident;
  if (D.Draft) {
    NodeId DraftPerSequence =
        B.apply(FormulaId::PagedKVBytesPerSequence,
                {D.Sequence, Block, D.Draft->KV,
                 B.op(Op::Mul, {D.Draft->KVShards, D.PP})},
                "draft.kv_bytes_per_sequence");
    PerSequence = B.op(Op::Add, {PerSequence, DraftPerSequence});
    AllWeights = B.op(Op::Add, {Resident, D.Draft->Weights});
    B.publish(MetricId::DraftWeightsPerDevice, D.Draft->Weights);
  }
  NodeId Fixed = B.op(Op::Add, {AllWeights, Activations});
  B.label(Fixed, "fixed_memory_per_device");
  // The runtime's reserve: an absolute size; or, as TensorRT-LLM, the
  // share of the memory left after the weights and activations that the
  // KV cache does not take; or, as vLLM, the share of all of the memory
  // the runtime does not use.
  NodeId Reserve;
  NodeId One = B.constant(1, "all of the memory");
  if (std::optional<NodeId> Size = Ctx.field(W, "memory_reserve")) {
    Reserve = *Size;
  } else if (std::optional<NodeId> Free = Ctx.field(W, "kv_free_fraction")) {
    Reserve = B.op(Op::Mul, {B.op(Op::Sub, {D.Capacity, Fixed}),
                             B.op(Op::Sub, {One, *Free})});
  } else {
    NodeId Usable = Ctx.orDefault(W, DefaultId::MemoryUtilization);
    Reserve = B.op(Op::Mul, {D.Capacity, B.op(Op::Sub, {One, Usable})});
  }
  B.publish(MetricId::RuntimeReserve, Reserve);
  NodeId KVCache = B.op(Op::Mul, {D.Batch, PerSequence});
  B.publish(MetricId::KVCachePerDevice, KVCache);
  NodeId Memory = B.op(Op::Add, {B.op(Op::Add, {Fixed, KVCache}), Reserve});
  B.publish(MetricId::MemoryPerDevice, Memory);
  B.publish(MetricId::MemoryFits, B.op(Op::Le, {Memory, D.Capacity}));
  B.publish(MetricId::ParallelismFits,
            B.op(Op::Le, {D.ReplicaDevices, Ctx.Sys->Devices}));
  // The paged KV cache per sequence and the fixed part of the memory, for
  // the batching wall.
  D.KVPerSequence = PerSequence;
  D.FixedMemory = Fixed;
  D.Reserve = Reserve;
  return true;
}

bool lowerPagedBatch(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  D.MaxSequences =
      B.apply(FormulaId::MaxConcurrentSequences,
              {D.Capacity, D.FixedMemory, D.Reserve, D.KVPerSequence}, "");
  B.publish(MetricId::MaxConcurrentSequences, D.MaxSequences);
  // The same free memory in tokens: what capacity planners compare with
  // engines' "KV cache: N tokens" lines.
  NodeId Free =
      B.op(Op::Sub, {B.op(Op::Sub, {D.Capacity, D.FixedMemory}), D.Reserve});
  B.publish(
      MetricId::KVCapacityTokens,
      B.op(Op::Floor,
           {B.op(Op::Div, {B.op(Op::Mul, {Free, D.KVStoreShards}), D.KV})}));
  NodeId BatchFits = B.op(Op::Le, {D.Batch, D.MaxSequences});
  B.publish(MetricId::BatchFits, BatchFits);
  NodeId Feasible =
      B.op(Op::And, {B.op(Op::And, {B.G.get(MetricId::MemoryFits),
                                    B.G.get(MetricId::ParallelismFits)}),
                     BatchFits});
  // A request longer than the model's context is refused by the engine
  // (vLLM and SGLang check prompt + max tokens against the model's length;
  // TensorRT-LLM against max_seq_len): the declared lengths must fit.
  // The engine checks the output's cap, `max_output` where the workload
  // gives one (a static batch's longest), else the mean output.
  if (std::optional<NodeId> Context = Ctx.field(*Ctx.Model, "context")) {
    B.publish(MetricId::LongestRequest, D.Longest);
    B.publish(MetricId::ModelContext, *Context);
    NodeId Fits = B.op(Op::Le, {D.Longest, *Context});
    B.publish(MetricId::ContextFits, Fits);
    Feasible = B.op(Op::And, {Feasible, Fits});
    // Lengths spread by prompt_cv and output_cv (lognormal, as the TTFT
    // and latency percentiles take them) reach past the means: the share
    // of requests longer than the context is refused, however the mean
    // fits. Under max_output the engine checks prompt + cap, and with one
    // output length prompt + output: the prompt's spread alone, exactly.
    // With both spread, prompt + output is a sum of two independent
    // lognormals, taken as the lognormal of its mean and variance (Fenton,
    // IRE Trans. Commun. Syst. 8(1), 1960).
    const ir::Entity &W = *Ctx.Workload;
    std::optional<NodeId> PromptCV = Ctx.field(W, "prompt_cv");
    std::optional<NodeId> OutputCV = Ctx.field(W, "output_cv");
    if (Ctx.field(W, "max_output"))
      OutputCV.reset();
    if (!D.Static && PromptCV && !OutputCV) {
      B.publish(MetricId::ContextRefused,
                B.apply(FormulaId::LengthExceedance,
                        {D.Prompt, *PromptCV,
                         B.op(Op::Sub, {*Context,
                                        B.op(Op::Sub, {D.Longest, D.Prompt})})},
                        ""));
    } else if (!D.Static && OutputCV) {
      auto sd = [&](NodeId Mean, const std::optional<NodeId> &CV) {
        NodeId S =
            B.op(Op::Mul, {Mean, CV ? *CV : B.constant(0, "one length")});
        return B.op(Op::Mul, {S, S});
      };
      NodeId SumCV = B.op(
          Op::Div, {B.op(Op::Sqrt, {B.op(Op::Add, {sd(D.Prompt, PromptCV),
                                                   sd(D.Output, OutputCV)})}),
                    D.Sequence});
      B.label(SumCV, "request_length_cv");
      B.publish(MetricId::ContextRefused,
                B.apply(FormulaId::LengthExceedance,
                        {D.Sequence, SumCV, *Context}, ""));
    }
  }
  B.publish(MetricId::Feasible, Feasible);
  return true;
}

} // namespace mlsc
